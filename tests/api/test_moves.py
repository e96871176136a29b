"""POST /api/v1/matches/{id}/moves/: submitting moves, and every way a move is refused."""

from __future__ import annotations

import pytest

from games.models import Match, Move

pytestmark = pytest.mark.django_db

ATTACK_8S = {"type": "attack", "cards": ["8S"]}


def moves_url(match) -> str:
    return f"/api/v1/matches/{match.pk}/moves/"


def error(response) -> dict:
    return response.json()["error"]


def test_legal_move_is_logged_and_answered_with_the_next_ply(duel):
    match, clients, _ = duel

    response = clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S})

    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("match", "ply", "seat", "move", "next_ply", "ended_match")} == {
        "match": match.pk, "ply": 0, "seat": 1, "move": ATTACK_8S, "next_ply": 1,
        "ended_match": False,
    }  # fmt: skip
    assert body["time_taken"] >= 0
    move = Move.objects.get(match=match, ply=0)
    assert (move.seat, move.move) == (1, ATTACK_8S)
    match.refresh_from_db()
    assert (match.ply, match.to_move, match.snapshot_ply) == (1, 0, 1)


def test_move_by_an_outsider_is_refused_with_403(duel):
    match, _, outsider = duel

    response = outsider.post(moves_url(match), {"ply": 0, "move": ATTACK_8S})

    assert response.status_code == 403
    assert error(response)["code"] == "not_your_seat"
    assert not Move.objects.exists()


def test_move_for_a_seat_the_user_does_not_hold_is_refused_with_403(duel):
    match, clients, _ = duel

    response = clients[0].post(moves_url(match), {"ply": 0, "seat": 1, "move": ATTACK_8S})

    assert response.status_code == 403
    assert error(response)["code"] == "not_your_seat"


def test_anonymous_move_is_refused_with_401(duel, api_client):
    match, _, _ = duel

    response = api_client.post(moves_url(match), {"ply": 0, "move": ATTACK_8S})

    assert response.status_code == 401
    assert error(response)["code"] == "not_authenticated"


def test_move_out_of_turn_is_refused_with_409_and_the_current_ply(duel):
    match, clients, _ = duel

    response = clients[0].post(moves_url(match), {"ply": 0, "move": {"type": "take"}})

    assert response.status_code == 409
    assert error(response) == {
        "code": "not_your_turn",
        "message": "It is not your seat's turn to move.",
        "detail": {"current_ply": 0, "to_move": 1},
    }


def test_move_answering_a_stale_ply_is_refused_with_409_and_the_current_ply(duel):
    match, clients, _ = duel
    clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S})
    clients[0].post(moves_url(match), {"ply": 1, "move": {"type": "take"}})

    response = clients[1].post(
        moves_url(match), {"ply": 0, "move": {"type": "attack", "cards": ["9S"]}}
    )

    assert response.status_code == 409
    assert error(response)["code"] == "stale_ply"
    assert error(response)["detail"] == {"current_ply": 2, "to_move": 1}


def test_move_answering_a_future_ply_is_refused_as_stale(duel):
    match, clients, _ = duel

    response = clients[1].post(moves_url(match), {"ply": 5, "move": ATTACK_8S})

    assert response.status_code == 409
    assert error(response)["detail"]["current_ply"] == 0


def test_illegal_move_is_refused_with_400_naming_the_rule(duel):
    match, clients, _ = duel

    response = clients[1].post(
        moves_url(match), {"ply": 0, "move": {"type": "attack", "cards": ["8S", "9S"]}}
    )

    assert response.status_code == 400
    assert error(response) == {
        "code": "illegal_move",
        "message": "illegal move: several attack cards must all be of one rank (Durak rule 4)",
        "detail": None,
    }
    assert not Move.objects.exists()


def test_move_of_the_wrong_kind_is_refused_naming_the_rule(duel):
    match, clients, _ = duel

    response = clients[1].post(moves_url(match), {"ply": 0, "move": {"type": "take"}})

    assert response.status_code == 400
    assert "the attacker cannot pass (Durak rule 4)" in error(response)["message"]


def test_unreadable_move_is_refused_with_400_invalid_move(duel):
    match, clients, _ = duel

    response = clients[1].post(moves_url(match), {"ply": 0, "move": {"type": "pass"}})

    assert response.status_code == 400
    assert error(response)["code"] == "invalid_move"
    assert "unknown move type 'pass'" in error(response)["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [({"move": ATTACK_8S}, "ply"), ({"ply": 0}, "move"), ({"ply": 0, "move": ["8S"]}, "move"),
     ({"ply": -1, "move": ATTACK_8S}, "ply")],
    ids=["no-ply", "no-move", "move-not-an-object", "negative-ply"],
)  # fmt: skip
def test_malformed_move_request_is_refused_with_400_field_errors(duel, body, field):
    match, clients, _ = duel

    response = clients[1].post(moves_url(match), body)

    assert response.status_code == 400
    assert error(response)["code"] == "invalid"
    assert field in error(response)["detail"]


def test_move_in_an_unknown_match_is_answered_404(duel):
    _, clients, _ = duel

    response = clients[1].post("/api/v1/matches/999999/moves/", {"ply": 0, "move": ATTACK_8S})

    assert response.status_code == 404
    assert error(response)["code"] == "not_found"


def test_move_in_a_finished_match_is_refused_with_409(duel):
    match, clients, _ = duel
    clients[1].post(f"/api/v1/matches/{match.pk}/resign/", {})

    response = clients[0].post(moves_url(match), {"ply": 0, "move": {"type": "take"}})

    assert response.status_code == 409
    assert error(response)["code"] == "match_not_active"
    assert error(response)["detail"] == {"status": "finished", "current_ply": 0}


def test_move_in_a_match_still_waiting_for_players_is_refused_with_409(players):
    ((creator, client),) = players(1)
    created = client.post("/api/v1/matches/", {"game": "durak", "players": 2}).json()

    response = client.post(f"/api/v1/matches/{created['id']}/moves/", {"ply": 0, "move": ATTACK_8S})

    assert response.status_code == 409
    assert error(response)["detail"]["status"] == "waiting"


def test_user_holding_two_seats_moves_for_the_seat_to_move_by_default(user_factory):
    from tests.api.conftest import DUEL_DECK
    from tests.matches import start_match, token_client

    user = user_factory()
    match = start_match([user, user], decks=[DUEL_DECK])
    client = token_client(user)

    first = client.post(moves_url(match), {"ply": 0, "move": ATTACK_8S})
    second = client.post(moves_url(match), {"ply": 1, "move": {"type": "take"}})

    assert (first.json()["seat"], second.json()["seat"]) == (1, 0)


# --- Idempotency-Key --------------------------------------------------------------------


def test_repeated_request_with_the_same_key_returns_the_first_answer_and_writes_nothing(duel):
    match, clients, _ = duel
    first = clients[1].post(
        moves_url(match), {"ply": 0, "move": ATTACK_8S}, HTTP_IDEMPOTENCY_KEY="k-1"
    )

    again = clients[1].post(
        moves_url(match), {"ply": 0, "move": ATTACK_8S}, HTTP_IDEMPOTENCY_KEY="k-1"
    )

    assert again.status_code == first.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Move.objects.filter(match=match).count() == 1
    assert Match.objects.get(pk=match.pk).ply == 1


def test_repeated_request_with_the_cards_in_another_order_is_the_same_move(duel):
    match, clients, _ = duel
    pair = {"type": "attack", "cards": ["8S", "8D"]}
    first = clients[1].post(moves_url(match), {"ply": 0, "move": pair}, HTTP_IDEMPOTENCY_KEY="k")

    again = clients[1].post(
        moves_url(match),
        {"ply": 0, "move": {"type": "attack", "cards": ["8D", "8S"]}},
        HTTP_IDEMPOTENCY_KEY="k",
    )

    assert again.json() == first.json()


def test_same_key_with_a_different_move_is_refused_with_422(duel):
    match, clients, _ = duel
    clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S}, HTTP_IDEMPOTENCY_KEY="k")

    response = clients[1].post(
        moves_url(match),
        {"ply": 0, "move": {"type": "attack", "cards": ["9S"]}},
        HTTP_IDEMPOTENCY_KEY="k",
    )

    assert response.status_code == 422
    assert error(response)["code"] == "idempotency_key_reused"
    assert Move.objects.filter(match=match).count() == 1


def test_same_key_for_a_new_ply_is_refused_with_422(duel):
    match, clients, _ = duel
    clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S}, HTTP_IDEMPOTENCY_KEY="k")
    clients[0].post(moves_url(match), {"ply": 1, "move": {"type": "take"}})

    response = clients[1].post(
        moves_url(match),
        {"ply": 2, "move": {"type": "attack", "cards": ["9S"]}},
        HTTP_IDEMPOTENCY_KEY="k",
    )

    assert response.status_code == 422
    assert Move.objects.filter(match=match).count() == 2


def test_repeated_request_without_a_key_is_refused_as_out_of_turn(duel):
    match, clients, _ = duel
    clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S})

    again = clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S})

    assert again.status_code == 409
    assert Move.objects.filter(match=match).count() == 1


def test_idempotency_key_longer_than_200_characters_is_refused_with_400(duel):
    match, clients, _ = duel

    response = clients[1].post(
        moves_url(match), {"ply": 0, "move": ATTACK_8S}, HTTP_IDEMPOTENCY_KEY="k" * 201
    )

    assert response.status_code == 400
    assert "Idempotency-Key" in error(response)["detail"]
