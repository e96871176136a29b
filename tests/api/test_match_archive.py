"""Reading matches: the archive (filters, pages), one match, resigning."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from games.match_endings import match_forfeit
from games.models import Match
from games.seating import SeatHolder
from games.services import match_create
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


@pytest.fixture
def fifty_one(user_factory):
    user = user_factory()
    return [
        match_create(creator=user, game="durak", players=2, seats=[SeatHolder(user=user), None])
        for _ in range(51)
    ]


def test_archive_pages_by_cursor_50_to_a_page_without_a_count(fifty_one, api_client):
    first = api_client.get(MATCHES).json()
    second = api_client.get(first["next"]).json()
    back = api_client.get(second["previous"]).json()

    assert "count" not in first
    assert [len(first["results"]), len(second["results"])] == [50, 1]
    assert [m["id"] for m in first["results"] + second["results"]] == [
        m.pk for m in reversed(fifty_one)
    ]
    assert second["next"] is None and first["previous"] is None
    assert back["results"] == first["results"]


def test_archive_cursor_keeps_the_filters(fifty_one, archive, api_client):
    first = api_client.get(MATCHES, {"game": "durak", "status": "waiting"}).json()
    second = api_client.get(first["next"]).json()

    assert "game=durak" in first["next"] and "status=waiting" in first["next"]
    assert len(first["results"]) + len(second["results"]) == 52  # and archive's waiting


def test_archive_still_serves_page_numbers_with_a_capped_count(fifty_one, api_client):
    second = api_client.get(MATCHES, {"page": 2}).json()

    assert (second["count"], second["count_capped"], len(second["results"])) == (51, False, 1)
    assert second["results"][0]["id"] == fifty_one[0].pk


def test_archive_count_stops_at_the_cap(fifty_one, api_client, monkeypatch):
    from cardserver import pagination

    monkeypatch.setattr(pagination, "COUNT_CAP", 40)
    first = api_client.get(MATCHES, {"page": 1}).json()

    assert (first["count"], first["count_capped"]) == (40, True)


def test_archive_refuses_a_page_number_past_the_cap_with_400(api_client):
    response = api_client.get(MATCHES, {"page": 201})

    assert response.status_code == 400
    assert "next" in response.json()["error"]["detail"]["page"][0]


def test_archive_refuses_a_cursor_it_did_not_make_with_400(api_client, db):
    response = api_client.get(MATCHES, {"cursor": "not-a-cursor"})

    assert response.status_code == 400
    assert "cursor" in response.json()["error"]["detail"]


def test_archive_filter_by_a_bot_name_it_does_not_know_is_empty(archive, api_client):
    assert ids(api_client.get(MATCHES, {"bot": "nobody"})) == set()


def test_archive_costs_the_same_queries_for_many_matches(
    user_factory, api_client, django_assert_max_num_queries, settings
):
    settings.API_THROTTLE_RATES = {}  # the rate-limit counters' queries are not the view's
    users = [user_factory() for _ in range(4)]
    for _ in range(12):
        start_match(users[:2])
        start_match(users, game="volynshchik")

    # Matches, seats with their holders (no count, and nothing per match).
    with django_assert_max_num_queries(2):
        response = api_client.get(MATCHES)

    assert len(response.json()["results"]) == 24


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
