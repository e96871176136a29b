"""Replays (GET .../replay/) and verification (GET .../verify/, manage.py verify_match)."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.core.management import CommandError, call_command

from cardkit.engine import load_game
from cardkit.engine.cards import shuffled_deck
from games.match_endings import match_forfeit
from games.models import Match, Move
from games.seating import SeatHolder
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(user_factory):
    """A 2-player Durak deal played to its end with random moves."""
    match = play_random_moves(start_match([user_factory(), user_factory()]), 500, seed=4)
    assert match.status == Match.Status.FINISHED
    return match


def replay(client, match, **params):
    return client.get(f"/api/v1/matches/{match.pk}/replay/", params)


def test_replay_of_a_finished_match_shows_every_state_with_all_hands(finished, api_client):
    body = replay(api_client, finished).json()

    assert body["complete"] is True
    assert body["seed"] == finished.seed
    assert body["decks"] == [shuffled_deck(finished.seed, 36)]
    steps = body["steps"]
    assert [s["ply"] for s in steps] == list(range(finished.ply + 1))
    assert steps[0]["move"] is None
    opening = steps[0]["state"]
    assert sorted(opening["hands"][0] + opening["hands"][1] + opening["talon"]) == sorted(
        body["decks"][0]
    )
    assert all("history" not in s["state"] for s in steps)
    logged = list(Move.objects.filter(match=finished).order_by("ply"))
    assert [s["move"] for s in steps[1:]] == [m.move for m in logged]
    assert steps[-1]["state"]["is_over"] is True
    assert steps[-1]["state"]["result"] == finished.result == body["result"]


def test_replay_names_its_seats_as_the_match_page_does(finished, api_client):
    body = replay(api_client, finished).json()

    seats = finished.seats.select_related("user").order_by("index")
    assert body["seats"] == [seat.user.username for seat in seats]


def test_replay_one_ply_gives_the_state_after_that_many_moves(finished, api_client):
    body = replay(api_client, finished, ply=3).json()

    game = load_game("durak", players=2)
    state = game.deal(seed=finished.seed, dealer=0)
    for move in Move.objects.filter(match=finished, ply__lt=3).order_by("ply"):
        state = state.play(move.move)
    expected = state.reveal()
    expected.pop("history")
    assert [s["ply"] for s in body["steps"]] == [3]
    assert body["steps"][0]["state"] == expected
    assert body["steps"][0]["move"] == Move.objects.get(match=finished, ply=2).move


def test_replay_of_a_ply_beyond_the_log_is_refused_with_400(finished, api_client):
    response = replay(api_client, finished, ply=finished.ply + 1)

    assert response.status_code == 400


def test_replay_of_a_match_in_play_shows_only_public_states(user_factory, api_client):
    match = play_random_moves(start_match([user_factory(), user_factory()]), 6)

    body = replay(api_client, match).json()

    assert (body["complete"], body["seed"], body["decks"]) == (False, None, None)
    assert len(body["steps"]) == 7
    for step in body["steps"]:
        assert not {"hand", "hands", "talon"} & set(step["state"])


def test_replay_of_a_match_waiting_for_players_is_refused_with_409(user, api_client):
    from games.services import match_create

    match = match_create(creator=user, game="durak", players=2, seats=[SeatHolder(user=user), None])

    response = replay(api_client, match)

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "match_not_started"


# --- Verification -----------------------------------------------------------------------


def test_finished_match_verifies(finished, api_client):
    response = api_client.get(f"/api/v1/matches/{finished.pk}/verify/")

    body = response.json()
    assert response.status_code == 200
    assert body["ok"] is True
    assert body["commitment"] == hashlib.sha256(finished.seed.encode("ascii")).hexdigest()
    assert body["decks"] == [shuffled_deck(finished.seed, 36)]
    assert body["moves"] == finished.ply
    assert body["problems"] == []


def test_replay_of_a_forfeited_match_says_who_forfeited_and_why(user_factory, api_client):
    match = start_match([user_factory(), user_factory()])
    match_forfeit(match_id=match.pk, seat=1, code="timeout", detail="seat 1 ran out of time")

    body = replay(api_client, match).json()

    assert (body["end_reason"], body["forfeit_seat"], body["forfeit_reason"]) == (
        "timeout", 1, "seat 1 ran out of time",
    )  # fmt: skip


def test_replay_of_a_match_finished_by_the_rules_has_no_forfeit(finished, api_client):
    body = replay(api_client, finished).json()

    assert (body["forfeit_seat"], body["forfeit_reason"]) == (None, "")


def test_forfeited_fool_series_verifies_with_the_deck_of_every_deal(user_factory, api_client):
    match = play_random_moves(start_match([user_factory(), user_factory()], format="fool"), 150)
    match_forfeit(match_id=match.pk, seat=0, code="forfeit", detail="test")

    body = api_client.get(f"/api/v1/matches/{match.pk}/verify/").json()

    assert body["ok"] is True
    series = load_game("durak", players=2).series(seed=match.seed)
    assert body["decks"] == [series.deck_of(n) for n in range(len(body["decks"]))]
    assert len(body["decks"]) >= 2


def test_verification_finds_a_seed_that_is_not_the_committed_one(finished, api_client):
    Match.objects.filter(pk=finished.pk).update(seed="0" * 64)

    body = api_client.get(f"/api/v1/matches/{finished.pk}/verify/").json()

    assert body["ok"] is False and body["commitment_ok"] is False


def test_verification_finds_a_log_that_does_not_fit_the_decks(finished, api_client):
    Move.objects.filter(match=finished, ply=0).update(move={"type": "take"})

    body = api_client.get(f"/api/v1/matches/{finished.pk}/verify/").json()

    assert (body["ok"], body["replay_ok"]) == (False, False)
    assert "does not replay" in body["problems"][0]


def test_verification_finds_a_result_the_log_does_not_give(finished, api_client):
    Match.objects.filter(pk=finished.pk).update(result={"loser": None, "out_order": []})

    body = api_client.get(f"/api/v1/matches/{finished.pk}/verify/").json()

    assert (body["ok"], body["result_ok"]) == (False, False)


def test_verifying_a_match_in_play_is_refused_with_409(user_factory, api_client):
    match = start_match([user_factory(), user_factory()])

    response = api_client.get(f"/api/v1/matches/{match.pk}/verify/")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "match_not_finished"


def test_verify_match_command_prints_the_checks(finished):
    out = io.StringIO()

    call_command("verify_match", str(finished.pk), stdout=out)

    text = out.getvalue()
    assert f"seed        {finished.seed}" in text
    assert f"match {finished.pk} verified" in text


def test_verify_match_command_fails_on_a_broken_commitment(finished):
    Match.objects.filter(pk=finished.pk).update(seed_commitment="f" * 64)

    with pytest.raises(CommandError, match="commitment"):
        call_command("verify_match", str(finished.pk), stdout=io.StringIO())


def test_verify_match_command_refuses_a_match_in_play(user_factory):
    match = start_match([user_factory(), user_factory()])

    with pytest.raises(CommandError, match="only a finished match"):
        call_command("verify_match", str(match.pk), stdout=io.StringIO())


def test_replay_names_the_version_of_each_bot_that_played_and_none_for_a_person(
    user_factory, api_client
):
    from bots.services import builtin_bots_ensure
    from games.services import match_create

    greedy = next(bot for bot in builtin_bots_ensure() if bot.name == "greedy")
    person = user_factory(username="person")
    match = match_create(
        creator=person, game="durak", players=2,
        seats=[SeatHolder(user=person), SeatHolder(bot=greedy)], by_arena=True,
    )  # fmt: skip
    match_forfeit(match_id=match.pk, seat=0, code="resign", detail="resigned")

    body = replay(api_client, match).json()

    label = greedy.versions.order_by("-created_at").first().label
    assert body["seats"] == ["person", "greedy"]
    assert body["seat_versions"] == [None, label]
