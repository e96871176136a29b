"""Creating matches, joining them, cancelling them."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from cardkit.engine.cards import deck_cards
from games.models import Match, Seat

pytestmark = pytest.mark.django_db

MATCHES = "/api/v1/matches/"


def create(client, **body):
    return client.post(MATCHES, {"game": "durak", "players": 2, **body})


def error(response) -> dict:
    return response.json()["error"]


def test_new_match_seats_its_creator_and_waits_for_the_others(players):
    ((alice, client),) = players(1)

    response = create(client, players=3)

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "waiting"
    assert [(s["index"], s["user"]) for s in body["seats"]] == [
        (0, alice.username), (1, None), (2, None),
    ]  # fmt: skip
    assert (body["state"], body["seed"], body["seed_commitment"]) == (None, None, "")
    assert body["created_by"] == alice.username


def test_match_with_every_seat_held_starts_at_once_with_a_published_commitment(players, client_bot):
    ((alice, client),) = players(1)
    bot, _ = client_bot(alice)

    response = create(client, seats=[{"user": alice.username}, {"bot": bot.name}])

    body = response.json()
    assert body["status"] == "active"
    assert re.fullmatch(r"[0-9a-f]{64}", body["seed_commitment"])
    assert body["seed"] is None and body["decks"] is None
    assert body["state"]["ply"] == 0 and "hand" not in body["state"]
    assert body["to_move"] == body["state"]["to_move"]
    assert body["deadline_at"] is not None


def test_seed_commitment_is_the_sha256_of_the_secret_seed(players, client_bot):
    ((alice, client),) = players(1)
    bot, _ = client_bot(alice)

    body = create(client, seats=[{"user": alice.username}, {"bot": bot.name}]).json()

    match = Match.objects.get(pk=body["id"])
    assert re.fullmatch(r"[0-9a-f]{64}", match.seed)
    assert body["seed_commitment"] == hashlib.sha256(match.seed.encode("ascii")).hexdigest()


def test_practice_match_may_be_dealt_from_the_creators_deck(players):
    ((alice, client),) = players(1)
    deck = deck_cards(36)[::-1]

    response = create(client, seats=[{"user": alice.username}] * 2, decks=[deck])

    body = response.json()
    assert body["status"] == "active"
    compact = json.dumps([deck], separators=(",", ":")).encode("ascii")
    assert body["seed_commitment"] == hashlib.sha256(compact).hexdigest()
    assert Match.objects.get(pk=body["id"]).seed == ""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"players": 5}, "Durak is played by 2 to 4 players"),
        ({"game": "volynshchik", "players": 3, "format": "fool"}, "only Durak"),
        ({"players": 2, "seats": [None]}, "give one entry per seat"),
        ({"deck_size": 32, "game": "volynshchik", "players": 2, "dealer": 3}, "dealer"),
        ({"rated": True, "decks": [deck_cards(36)]}, "rated match is dealt from a secret"),
        ({"decks": [deck_cards(36)[:-1]]}, "exactly once"),
        ({"format": "fool", "decks": [deck_cards(36)]}, "single deals"),
    ],
    ids=["players", "fool-volynshchik", "seat-count", "dealer", "rated-decks",
         "short-deck", "fool-decks"],
)  # fmt: skip
def test_match_options_the_engine_refuses_are_answered_400(players, body, message):
    ((_alice, client),) = players(1)

    response = create(client, **body)

    assert response.status_code == 400
    assert message in error(response)["message"]


def test_seating_another_person_at_creation_is_refused(players):
    (_alice, client), (bob, _) = players(2)

    response = create(client, seats=[{"user": bob.username}, None])

    assert response.status_code == 400
    assert "seats" in error(response)["detail"]


def test_seating_an_unknown_bot_is_refused(players):
    ((_alice, client),) = players(1)

    response = create(client, seats=[{"bot": "nobody"}, None])

    assert response.status_code == 400
    assert error(response)["detail"] == {"seats": ["No bot named 'nobody'."]}


def test_seating_a_bot_that_does_not_play_the_game_is_refused(players, client_bot):
    ((alice, client),) = players(1)
    bot, _ = client_bot(alice, games=["volynshchik"])

    response = create(client, seats=[{"bot": bot.name}, None])

    assert response.status_code == 400
    assert "does not play durak" in error(response)["message"]


def test_seat_spec_with_both_user_and_bot_is_refused(players):
    ((alice, client),) = players(1)

    response = create(client, seats=[{"user": alice.username, "bot": "x"}, None])

    assert response.status_code == 400


def test_rated_match_refuses_one_player_in_two_seats(players):
    ((alice, client),) = players(1)

    response = create(client, rated=True, seats=[{"user": alice.username}] * 2)

    assert response.status_code == 400


def test_anonymous_cannot_create_a_match(api_client):
    response = create(api_client)

    assert response.status_code == 401


# --- Joining ----------------------------------------------------------------------------


def test_joining_the_last_open_seat_starts_the_match(players):
    (_alice, client_a), (bob, client_b) = players(2)
    match_id = create(client_a).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {})

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "active"
    assert body["seats"][1]["user"] == bob.username
    assert Match.objects.get(pk=match_id).snapshot_ply == 0


def test_joining_a_chosen_seat(players):
    (_alice, client_a), (bob, client_b) = players(2)
    match_id = create(client_a, players=3).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {"seat": 2})

    assert response.json()["seats"][2]["user"] == bob.username
    assert response.json()["status"] == "waiting"


def test_joining_a_held_seat_is_refused_with_409(players):
    (_alice, client_a), (_bob, client_b) = players(2)
    match_id = create(client_a, players=3).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {"seat": 0})

    assert response.status_code == 409
    assert error(response)["code"] == "seat_taken"


def test_joining_a_seat_the_match_does_not_have_is_refused_with_400(players):
    (_alice, client_a), (_bob, client_b) = players(2)
    match_id = create(client_a).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {"seat": 7})

    assert response.status_code == 400


def test_joining_a_started_match_is_refused_with_409(players):
    (_a, client_a), (_b, client_b), (_c, client_c) = players(3)
    match_id = create(client_a).json()["id"]
    client_b.post(f"{MATCHES}{match_id}/join/", {})

    response = client_c.post(f"{MATCHES}{match_id}/join/", {})

    assert response.status_code == 409
    assert error(response)["code"] == "match_not_waiting"


def test_joining_a_rated_match_twice_is_refused_with_409(players):
    (_a, client_a), (_b, client_b) = players(2)
    match_id = create(client_a, players=3, rated=True).json()["id"]
    client_b.post(f"{MATCHES}{match_id}/join/", {})

    response = client_b.post(f"{MATCHES}{match_id}/join/", {})

    assert response.status_code == 409
    assert error(response)["code"] == "already_seated"


def test_joining_with_ones_own_client_bot_seats_the_bot(players, client_bot):
    (_a, client_a), (bob, client_b) = players(2)
    bot, _ = client_bot(bob)
    match_id = create(client_a).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {"bot": bot.name})

    seat = response.json()["seats"][1]
    assert (seat["user"], seat["bot"], seat["bot_kind"]) == (None, bot.name, "client")
    assert Seat.objects.get(match_id=match_id, index=1).bot == bot


def test_joining_with_someone_elses_bot_is_refused(players, client_bot):
    (alice, client_a), (_bob, client_b) = players(2)
    bot, _ = client_bot(alice)
    match_id = create(client_a).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {"bot": bot.name})

    assert response.status_code == 400
    assert "your own bots" in error(response)["message"]


def test_joining_an_unknown_match_is_answered_404(players):
    ((_a, client),) = players(1)

    response = client.post(f"{MATCHES}424242/join/", {})

    assert response.status_code == 404


def test_anonymous_cannot_join(players, api_client):
    ((_a, client),) = players(1)
    match_id = create(client).json()["id"]

    response = api_client.post(f"{MATCHES}{match_id}/join/", {})

    assert response.status_code == 401


# --- Cancelling -------------------------------------------------------------------------


def test_creator_cancels_a_waiting_match(players):
    ((_a, client),) = players(1)
    match_id = create(client).json()["id"]

    response = client.post(f"{MATCHES}{match_id}/cancel/")

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["end_reason"]) == ("aborted", "cancelled")


def test_only_the_creator_may_cancel(players):
    (_a, client_a), (_b, client_b) = players(2)
    match_id = create(client_a).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/cancel/")

    assert response.status_code == 403
    assert error(response)["code"] == "not_match_creator"


def test_a_started_match_cannot_be_cancelled(players):
    (_a, client_a), (_b, client_b) = players(2)
    match_id = create(client_a).json()["id"]
    client_b.post(f"{MATCHES}{match_id}/join/", {})

    response = client_a.post(f"{MATCHES}{match_id}/cancel/")

    assert response.status_code == 409


def http_bot(owner, name: str = "their-http-bot"):
    from bots.models import Bot

    return Bot.objects.create(
        name=name, owner=owner, kind=Bot.Kind.HTTP, url="http://127.0.0.1:9/", games=["durak"]
    )


@pytest.mark.parametrize("rated", [True, False])
def test_creating_a_match_that_seats_someone_elses_bot_is_refused(players, rated):
    (alice, _client_a), (_bob, client_b) = players(2)
    bot = http_bot(alice)

    response = client_b.post(
        MATCHES,
        {"game": "durak", "players": 2, "rated": rated, "move_time_limit": 0.05,
         "seats": [{"bot": bot.name}, {"bot": "random"}]},
        format="json",
    )  # fmt: skip

    assert response.status_code == 400
    assert error(response)["code"] == "invalid"
    assert f"your own bots and the built-in ones, not {bot.name}" in error(response)["message"]
    assert not Seat.objects.filter(bot=bot).exists()


def test_creating_a_rated_match_of_ones_own_bot_and_a_built_in_one_is_allowed(players):
    ((alice, client),) = players(1)
    bot = http_bot(alice, name="mine")

    response = client.post(
        MATCHES,
        {"game": "durak", "players": 2, "rated": True,
         "seats": [{"bot": bot.name}, {"bot": "random"}]},
        format="json",
    )  # fmt: skip

    assert response.status_code == 201, response.json()


def test_joining_with_a_built_in_bot_is_allowed(players):
    ((_a, client_a), (_b, client_b)) = players(2)
    match_id = create(client_a).json()["id"]

    response = client_b.post(f"{MATCHES}{match_id}/join/", {"bot": "greedy"})

    assert response.status_code == 200, response.json()
    assert response.json()["seats"][1]["bot"] == "greedy"
