"""Reading matches: the archive (filters, pages), one match, resigning."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from games.models import Match
from games.seating import SeatHolder
from games.services import match_create, match_forfeit
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db

MATCHES = "/api/v1/matches/"


def ids(response) -> set[int]:
    return {match["id"] for match in response.json()["results"]}


@pytest.fixture
def archive(user_factory, client_bot):
    """Three matches: alice v bob Durak finished (bob lost), Volynshchik in play, one waiting."""
    alice, bob, carol = (user_factory(username=n) for n in ("alice", "bob", "carol"))
    bot, _ = client_bot(carol, name="robo")
    finished = start_match([alice, bob], rated=True)
    match_forfeit(match_id=finished.pk, seat=1, code="forfeit", detail="test")
    playing = match_create(
        creator=carol, game="volynshchik", players=3,
        seats=[SeatHolder(user=carol), SeatHolder(bot=bot), SeatHolder(user=alice)],
    )  # fmt: skip
    waiting = match_create(creator=bob, game="durak", players=2, seats=[SeatHolder(user=bob), None])
    return {"finished": finished, "playing": playing, "waiting": waiting, "bot": bot}


def test_archive_lists_matches_newest_first_with_seats(archive, api_client):
    response = api_client.get(MATCHES)

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    assert [m["id"] for m in body["results"]] == [
        archive["waiting"].pk, archive["playing"].pk, archive["finished"].pk,
    ]  # fmt: skip
    listed = body["results"][1]
    assert [s["bot"] for s in listed["seats"]] == [None, "robo", None]
    assert "state" not in listed and "seed" not in listed


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("game=volynshchik", {"playing"}),
        ("status=finished", {"finished"}),
        ("status=waiting", {"waiting"}),
        ("user=alice", {"finished", "playing"}),
        ("user=robo-account", {"playing"}),
        ("bot=robo", {"playing"}),
        ("loser=1", {"finished"}),
        ("result=decided", {"finished"}),
        ("result=drawn", set()),
        ("rated=true", {"finished"}),
        ("players=3", {"playing"}),
        ("end_reason=forfeit", {"finished"}),
        # The filter, not DRF's choice of renderer (URL_FORMAT_OVERRIDE is off).
        ("format=deal", {"finished", "playing", "waiting"}),
        ("format=fool", set()),
        ("format=deal&game=durak&status=waiting", {"waiting"}),
    ],
)
def test_archive_filters(archive, api_client, query, expected):
    response = api_client.get(f"{MATCHES}?{query}")

    assert ids(response) == {archive[name].pk for name in expected}


def test_archive_filters_a_bot_by_id(archive, api_client):
    response = api_client.get(f"{MATCHES}?bot={archive['bot'].pk}")

    assert ids(response) == {archive["playing"].pk}


def test_archive_filters_by_date(archive, api_client):
    Match.objects.filter(pk=archive["finished"].pk).update(
        created_at=timezone.now() - timedelta(days=3)
    )
    since = (timezone.now() - timedelta(days=1)).isoformat().replace("+00:00", "Z")

    recent = api_client.get(MATCHES, {"created_after": since})
    old = api_client.get(MATCHES, {"created_before": since})
    finished_today = api_client.get(MATCHES, {"finished_after": since})

    assert ids(recent) == {archive["playing"].pk, archive["waiting"].pk}
    assert ids(old) == {archive["finished"].pk}
    assert ids(finished_today) == {archive["finished"].pk}


def test_archive_refuses_an_unknown_filter_value_with_400(archive, api_client):
    response = api_client.get(f"{MATCHES}?status=sleeping")

    assert response.status_code == 400
    assert "status" in response.json()["error"]["detail"]


def test_archive_is_paginated_50_to_a_page(user_factory, api_client):
    user = user_factory()
    for _ in range(51):
        match_create(creator=user, game="durak", players=2, seats=[SeatHolder(user=user), None])

    first = api_client.get(MATCHES).json()
    second = api_client.get(MATCHES, {"page": 2}).json()

    assert (first["count"], len(first["results"]), len(second["results"])) == (51, 50, 1)
    assert first["next"].endswith("page=2")


def test_archive_costs_the_same_queries_for_many_matches(
    user_factory, api_client, django_assert_max_num_queries, settings
):
    settings.API_THROTTLE_RATES = {}  # the rate-limit counters' queries are not the view's
    users = [user_factory() for _ in range(4)]
    for _ in range(12):
        start_match(users[:2])
        start_match(users, game="volynshchik")

    # Count, matches, seats with their holders (and nothing per match).
    with django_assert_max_num_queries(3):
        response = api_client.get(MATCHES)

    assert response.json()["count"] == 24


def test_match_in_play_shows_the_public_view_only(archive, api_client):
    response = api_client.get(f"{MATCHES}{archive['playing'].pk}/")

    body = response.json()
    assert body["status"] == "active"
    assert body["seed"] is None and body["decks"] is None
    state = body["state"]
    assert state["seat"] is None
    assert not {"hand", "hands", "reserve", "reserves"} & set(state)


def test_finished_match_shows_every_card_the_seed_and_the_decks(archive, api_client):
    response = api_client.get(f"{MATCHES}{archive['finished'].pk}/")

    body = response.json()
    match = Match.objects.get(pk=archive["finished"].pk)
    assert body["seed"] == match.seed
    assert len(body["decks"]) == 1 and len(body["decks"][0]) == 36
    assert len(body["state"]["hands"]) == 2 and "talon" in body["state"]
    assert (body["loser"], body["end_reason"], body["forfeit_reason"]) == (1, "forfeit", "test")


def test_waiting_match_has_no_state(archive, api_client):
    response = api_client.get(f"{MATCHES}{archive['waiting'].pk}/")

    assert response.json()["state"] is None


def test_unknown_match_is_answered_404(api_client, db):
    response = api_client.get(f"{MATCHES}99999/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


# --- Resigning --------------------------------------------------------------------------


def test_resigning_loses_the_match(players):
    (alice, client_a), (bob, _) = players(2)
    match = play_random_moves(start_match([alice, bob]), 3)

    response = client_a.post(f"{MATCHES}{match.pk}/resign/", {})

    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["loser"], body["end_reason"]) == ("finished", 0, "resign")
    assert body["result"]["loser"] == 0
    assert body["seed"] is not None


def test_resigning_a_fool_series_loses_the_series(players):
    (alice, _), (bob, client_b) = players(2)
    match = start_match([alice, bob], format="fool")

    body = client_b.post(f"{MATCHES}{match.pk}/resign/", {}).json()

    assert body["result"] == {"loser": 1, "letters": [0, 0], "deals": []}


def test_resigning_a_match_one_does_not_play_is_refused_with_403(players):
    (alice, _), (bob, _), (_c, outsider) = players(3)
    match = start_match([alice, bob])

    response = outsider.post(f"{MATCHES}{match.pk}/resign/", {})

    assert response.status_code == 403


def test_resigning_a_finished_match_is_refused_with_409(players):
    (alice, client_a), (bob, client_b) = players(2)
    match = start_match([alice, bob])
    client_b.post(f"{MATCHES}{match.pk}/resign/", {})

    response = client_a.post(f"{MATCHES}{match.pk}/resign/", {})

    assert response.status_code == 409
    assert Match.objects.get(pk=match.pk).loser == 1
