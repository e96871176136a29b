"""GET .../me/ (a seat's own view) and GET .../wait/ (long-poll until the turn comes)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from games.move_services import match_move_submit
from games.seating import SeatHolder
from games.serializers import MoveOutcomeSerializer, PlayerViewSerializer
from tests.api.conftest import DUEL_DECK
from tests.matches import start_match, token_client

pytestmark = pytest.mark.django_db


def me(client, match, **params):
    return client.get(f"/api/v1/matches/{match.pk}/me/", params)


def wait(client, match, **params):
    return client.get(f"/api/v1/matches/{match.pk}/wait/", params)


def test_seat_to_move_sees_its_hand_legal_moves_and_the_ply_to_answer(duel):
    match, clients, _ = duel

    body = me(clients[1], match).json()

    assert (body["seat"], body["ply"], body["to_move"], body["your_turn"]) == (1, 0, 1, True)
    assert body["view"]["hand"] == ["8S", "9S", "8D", "9D", "8C", "9C"]
    assert {"type": "attack", "cards": ["8S", "8D"]} in body["legal_moves"]
    assert body["your_seats"] == [1]
    assert set(body) == set(PlayerViewSerializer().fields)


def test_seat_not_to_move_sees_its_hand_but_no_legal_moves(duel):
    match, clients, _ = duel

    body = me(clients[0], match).json()

    assert body["your_turn"] is False and body["legal_moves"] is None
    assert body["view"]["hand"] == ["6S", "7S", "6D", "7D", "6C", "7C"]
    assert body["view"]["hand_sizes"] == [6, 6]


def test_own_view_of_an_outsider_is_refused_with_403(duel):
    match, _, outsider = duel

    response = me(outsider, match)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_your_seat"


def test_own_view_of_anonymous_is_refused_with_401(duel, api_client):
    match, _, _ = duel

    assert me(api_client, match).status_code == 401


def test_own_view_of_an_unknown_match_is_answered_404(duel):
    _, clients, _ = duel

    response = clients[0].get("/api/v1/matches/987654/me/")

    assert response.status_code == 404


def test_user_holding_two_seats_chooses_one_with_the_seat_parameter(user):
    match = start_match([user, user], decks=[DUEL_DECK])
    client = token_client(user)

    default = me(client, match).json()
    chosen = me(client, match, seat=0).json()

    assert (default["seat"], chosen["seat"]) == (1, 0)
    assert chosen["view"]["hand"][0] == "6S"


def test_choosing_a_seat_one_does_not_hold_is_refused_with_403(duel):
    match, clients, _ = duel

    response = me(clients[0], match, seat=1)

    assert response.status_code == 403


def test_client_bot_account_reads_its_bots_seat(user, client_bot):
    bot, bot_client = client_bot(user)
    from games.services import match_create

    match = match_create(
        creator=user, game="durak", players=2, seats=[SeatHolder(user=user), SeatHolder(bot=bot)],
        decks=[DUEL_DECK],
    )  # fmt: skip

    body = me(bot_client, match).json()

    assert (body["seat"], body["your_turn"]) == (1, True)


def test_move_answer_has_the_documented_fields(duel):
    match, clients, _ = duel

    response = clients[1].post(
        f"/api/v1/matches/{match.pk}/moves/",
        {"ply": 0, "move": {"type": "attack", "cards": ["9C"]}},
    )

    assert set(response.json()) == set(MoveOutcomeSerializer().fields)


# --- Long-poll --------------------------------------------------------------------------


def test_wait_returns_at_once_when_it_is_already_your_turn(duel):
    match, clients, _ = duel
    started = time.monotonic()

    body = wait(clients[1], match, after_ply=0, timeout=5).json()

    assert time.monotonic() - started < 1
    assert (body["your_turn"], body["ply"]) == (True, 0)


def test_wait_returns_at_the_timeout_when_nothing_changes(duel):
    match, clients, _ = duel
    started = time.monotonic()

    body = wait(clients[0], match, after_ply=0, timeout=0.3).json()

    assert 0.3 <= time.monotonic() - started < 2
    assert (body["ply"], body["your_turn"]) == (0, False)


def test_wait_returns_at_once_when_the_match_is_past_the_ply_given(duel):
    match, clients, _ = duel
    match_move_submit(match_id=match.pk, seat=1, ply=0, move={"type": "attack", "cards": ["8S"]})
    started = time.monotonic()

    body = wait(clients[1], match, after_ply=0, timeout=5).json()

    assert time.monotonic() - started < 1
    assert body["ply"] == 1


def test_wait_of_a_spectator_answers_the_public_view(duel, api_client):
    match, _, _ = duel

    body = wait(api_client, match, timeout=0).json()

    assert body["seat"] is None and body["your_seats"] == []
    assert "hand" not in body["view"]


def test_wait_longer_than_30_seconds_is_refused_with_400(duel):
    match, clients, _ = duel

    response = wait(clients[0], match, timeout=31)

    assert response.status_code == 400
    assert "timeout" in response.json()["error"]["detail"]


def test_wait_for_a_seat_one_does_not_hold_is_refused_with_403(duel):
    match, clients, _ = duel

    response = wait(clients[0], match, seat=1, timeout=0)

    assert response.status_code == 403


@pytest.mark.django_db(transaction=True)
def test_wait_returns_as_soon_as_the_opponent_moves(user_factory):
    a, b = user_factory(), user_factory()
    match = start_match([a, b], decks=[DUEL_DECK])

    def opponent_moves_later():
        try:
            time.sleep(0.4)
            match_move_submit(
                match_id=match.pk, seat=1, ply=0, move={"type": "attack", "cards": ["8S"]}
            )
        finally:
            connection.close()

    mover = threading.Thread(target=opponent_moves_later)
    started = time.monotonic()
    mover.start()
    body = wait(token_client(a), match, after_ply=0, timeout=10).json()
    elapsed = time.monotonic() - started
    mover.join()

    assert 0.3 < elapsed < 3
    assert (body["ply"], body["your_turn"]) == (1, True)
    assert body["legal_moves"] == [{"type": "take"}]
