"""Concurrent submissions: exactly one move per ply is ever written."""

from __future__ import annotations

import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from games.models import Move
from tests.api.conftest import DUEL_DECK
from tests.matches import start_match, token_client

THREADS = 50
# Seconds the threads wait for each other at the start before the test gives up.
START_WAIT = 60


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_fifty_simultaneous_submissions_of_one_move_write_it_once(user_factory):
    attacker = user_factory()
    match = start_match([user_factory(), attacker], decks=[DUEL_DECK])
    # A thread that fails before the start (no database connection to be had) breaks the
    # barrier for the others after START_WAIT, so that the test fails instead of hanging
    # pytest's exit on fifty threads waiting for ever.
    start = threading.Barrier(THREADS, timeout=START_WAIT)
    statuses: list[int] = []

    def submit() -> None:
        client = token_client(attacker)
        try:
            start.wait()
            response = client.post(
                f"/api/v1/matches/{match.pk}/moves/",
                {"ply": 0, "move": {"type": "attack", "cards": ["8S"]}},
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, daemon=True) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) == [200] + [409] * (THREADS - 1)
    assert Move.objects.filter(match=match).count() == 1
    match.refresh_from_db()
    assert (match.ply, match.to_move) == (1, 0)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_both_players_resigning_at_once_one_resigns_the_other_gets_409(user_factory):
    players = [user_factory(), user_factory()]
    # A race is won or lost by chance: five matches, so that a lost one shows.
    for _ in range(5):
        match = start_match(players, decks=[DUEL_DECK])
        answers = _resign_at_once(match, players)

        statuses = sorted(answer.status_code for answer in answers.values())
        assert statuses == [200, 409]
        (refused,) = [a for a in answers.values() if a.status_code == 409]
        assert refused.json()["error"]["code"] == "match_not_active"
        (resigned,) = [seat for seat, a in answers.items() if a.status_code == 200]
        match.refresh_from_db()
        assert (match.status, match.end_reason, match.loser) == ("finished", "resign", resigned)


def _resign_at_once(match, players) -> dict:
    start = threading.Barrier(len(players), timeout=START_WAIT)
    answers: dict[int, object] = {}

    def resign(seat: int) -> None:
        client = token_client(players[seat])
        try:
            start.wait()
            answers[seat] = client.post(f"/api/v1/matches/{match.pk}/resign/")
        finally:
            connection.close()

    threads = [
        threading.Thread(target=resign, args=(seat,), daemon=True) for seat in range(len(players))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.django_db
def test_a_second_move_for_one_ply_is_refused_by_the_database(user_factory):
    match = start_match([user_factory(), user_factory()], decks=[DUEL_DECK])
    fields = {"seat": 1, "received_at": timezone.now(), "time_taken": 0.0}
    Move.objects.create(match=match, ply=0, move={"type": "attack", "cards": ["8S"]}, **fields)

    with pytest.raises(IntegrityError), transaction.atomic():
        Move.objects.create(match=match, ply=0, move={"type": "attack", "cards": ["9S"]}, **fields)


@pytest.mark.django_db(transaction=True)
def test_a_move_the_database_refuses_at_commit_answers_409_and_changes_nothing(user_factory):
    # A row for ply 0 written behind the match lock's back: the move's INSERT breaks the
    # unique constraint, the last guard, and the move is answered as a lost race.
    attacker = user_factory()
    match = start_match([user_factory(), attacker], decks=[DUEL_DECK])
    Move.objects.create(
        match=match, ply=0, seat=1, move={"type": "attack", "cards": ["9S"]},
        received_at=timezone.now(), time_taken=0.0,
    )  # fmt: skip
    snapshot = type(match).objects.values_list("snapshot", flat=True).get(pk=match.pk)

    response = token_client(attacker).post(
        f"/api/v1/matches/{match.pk}/moves/",
        {"ply": 0, "move": {"type": "attack", "cards": ["8S"]}},
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "stale_ply"
    assert list(Move.objects.filter(match=match).values_list("move", flat=True)) == [
        {"type": "attack", "cards": ["9S"]}
    ]
    match.refresh_from_db()
    assert (match.ply, match.to_move, match.snapshot) == (0, 1, snapshot)
