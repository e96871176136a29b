"""Answers that came at once, recorded together by a recording thread of the I/O pool
(``bots.pool.answers_record``): their moves in one transaction and one commit, and each
on its own again when that transaction fails, so that one bad answer (or a failed commit)
never costs another answer its move, nor plays a move twice."""

from __future__ import annotations

import re
import time

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext

from bots import driver, pool
from bots.models import BotTurnLease
from cardkit.engine import load_state
from games.models import Match, Move
from tests.bots.arena_matches import new_match

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


class _Pool:
    """This process as a pool process whose calls are kept here instead of made."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def submit(self, call: dict) -> None:
        self.calls.append(call)


@pytest.fixture
def pooled(monkeypatch) -> _Pool:
    fake = _Pool()
    monkeypatch.setattr(driver, "pool_enabled", lambda: True)
    monkeypatch.setattr(pool, "_POOL", fake)
    return fake


@pytest.fixture
def commits(monkeypatch) -> list[int]:
    """The commits of this thread's database connection, counted."""
    counted: list[int] = []
    commit = connection.commit

    def counting() -> None:
        counted.append(1)
        commit()

    monkeypatch.setattr(connection, "commit", counting)
    return counted


def matches_with_calls(user, http_bot_record, pooled: _Pool, count: int, opponent=None):
    """Start ``count`` matches between two HTTP bots (or one and ``opponent``); return
    them and their first calls, handed to the pool (never sent: the test answers for the
    bots)."""
    url = "http://127.0.0.1:9/move"
    one = http_bot_record(url, "one")
    other = opponent or http_bot_record(url, "other")
    matches = [new_match(user, [one, other], time_limit=30.0) for _ in range(count)]
    for match in matches:
        driver.bot_turns_play(match_id=match.pk, pool=True)
    first = list(pooled.calls)
    assert sorted(c["match_id"] for c in first) == sorted(m.pk for m in matches)
    pooled.calls.clear()
    return matches, first


def answer(move: dict) -> dict:
    now = time.time()
    return {"move": move, "fault": None, "detail": "", "sent_at": now - 0.1, "answered_at": now}


def good(call: dict) -> dict:
    return answer(call["payload"]["legal_moves"][0])


def moves_at_first_ply(matches) -> dict[int, int]:
    return {m.pk: Move.objects.filter(match=m, ply=0).count() for m in matches}


def moves_at_call(calls: list[dict]) -> dict[int, int]:
    return {c["match_id"]: Move.objects.filter(match_id=c["match_id"], ply=c["ply"]).count()
            for c in calls}  # fmt: skip


def assert_next_calls_handed_once(pooled, matches) -> None:
    """Each match's call for its next ply (1) went to the pool exactly once."""
    assert sorted((c["match_id"], c["ply"]) for c in pooled.calls) == sorted(
        (m.pk, 1) for m in matches
    )


def test_answers_that_came_at_once_are_recorded_with_one_commit(
    user, http_bot_record, pooled, commits
):
    matches, first = matches_with_calls(user, http_bot_record, pooled, 3)
    commits.clear()

    pool.answers_record([(call, good(call)) for call in first])

    assert len(commits) == 1
    assert moves_at_first_ply(matches) == {m.pk: 1 for m in matches}
    # Each match's next call was handed to the pool once, after the commit.
    assert_next_calls_handed_once(pooled, matches)


def test_answers_that_came_at_once_are_read_written_and_moved_on_in_a_statement_each(
    user, http_bot_record, pooled
):
    matches, first = matches_with_calls(user, http_bot_record, pooled, 3)

    with CaptureQueriesContext(connection) as queries:
        pool.answers_record([(call, good(call)) for call in first])

    statements = [q["sql"] for q in queries.captured_queries]
    locked_reads = [s for s in statements if s.startswith("SELECT") and "FOR UPDATE" in s]
    moves_written = [s for s in statements if 'INSERT INTO "games_move"' in s]
    claims_moved = [s for s in statements if s.startswith('UPDATE "bots_botturnlease"')]
    assert len(locked_reads) == len(moves_written) == len(claims_moved) == 1
    assert moves_at_first_ply(matches) == {m.pk: 1 for m in matches}
    for match in matches:
        match.refresh_from_db()
        assert (match.ply, match.snapshot_ply) == (1, 1) and match.deadline_at is not None
        assert match.to_move == load_state(match.snapshot).to_move
    assert_next_calls_handed_once(pooled, matches)
    for call in pooled.calls:
        lease = BotTurnLease.objects.get(match_id=call["match_id"])
        assert (lease.ply, lease.holder) == (1, call["holder"])
        assert lease.calling_owner_id == call["owner_id"]


def test_one_illegal_move_among_answers_recorded_at_once_forfeits_only_its_seat(
    user, http_bot_record, pooled
):
    matches, first = matches_with_calls(user, http_bot_record, pooled, 3)
    bad = first[1]
    # The seat to move attacks: taking the cards is not its move.
    answers = [(call, answer({"type": "take"}) if call is bad else good(call)) for call in first]

    pool.answers_record(answers)

    for match in matches:
        match.refresh_from_db()
        if match.pk == bad["match_id"]:
            assert (match.status, match.forfeit_seat) == (Match.Status.FINISHED, bad["seat"])
            assert match.end_reason == "illegal_move"
        else:
            assert (match.status, match.ply, match.forfeit_seat) == (Match.Status.ACTIVE, 1, None)
    moved = {m.pk: 1 for m in matches} | {bad["match_id"]: 0}
    assert moves_at_first_ply(matches) == moved
    assert sorted(c["match_id"] for c in pooled.calls) == sorted(
        m.pk for m in matches if m.pk != bad["match_id"]
    )


def test_answers_whose_common_commit_failed_are_each_recorded_once(
    user, http_bot_record, pooled, monkeypatch
):
    matches, first = matches_with_calls(user, http_bot_record, pooled, 3)
    commit = connection.commit
    failed = []

    def fails_once() -> None:
        if not failed:
            failed.append(1)
            raise DatabaseError("the connection was lost at commit")
        commit()

    monkeypatch.setattr(connection, "commit", fails_once)

    pool.answers_record([(call, good(call)) for call in first])

    assert failed
    assert moves_at_first_ply(matches) == {m.pk: 1 for m in matches}
    assert_next_calls_handed_once(pooled, matches)


def test_an_answer_whose_claim_another_driver_took_meanwhile_is_not_recorded(
    user, http_bot_record, pooled
):
    matches, first = matches_with_calls(user, http_bot_record, pooled, 2)
    taken, kept = first
    # The claim lapsed while the answer waited, and another driver took the match.
    BotTurnLease.objects.filter(match_id=taken["match_id"]).update(holder="another-driver")

    pool.answers_record([(call, good(call)) for call in first])

    assert moves_at_first_ply(matches) == {taken["match_id"]: 0, kept["match_id"]: 1}
    assert BotTurnLease.objects.get(match_id=taken["match_id"]).holder == "another-driver"
    assert [c["match_id"] for c in pooled.calls] == [kept["match_id"]]


def test_an_answer_before_a_built_in_turn_whose_claim_was_taken_is_not_recorded(
    user, http_bot_record, pooled, builtin
):
    matches, first = matches_with_calls(user, http_bot_record, pooled, 2, builtin["random"])
    taken, kept = first
    BotTurnLease.objects.filter(match_id=taken["match_id"]).update(holder="another-driver")

    pool.answers_record([(call, good(call)) for call in first])

    assert moves_at_call(first) == {taken["match_id"]: 0, kept["match_id"]: 1}
    assert BotTurnLease.objects.get(match_id=taken["match_id"]).holder == "another-driver"


def test_the_moves_and_matches_of_a_commit_are_written_with_numbered_placeholders(
    user, http_bot_record, pooled
):
    # psycopg would rewrite the %s of a statement of so many parameters at every execution.
    matches, first = matches_with_calls(user, http_bot_record, pooled, 8)

    with CaptureQueriesContext(connection) as queries:
        pool.answers_record([(call, good(call)) for call in first])

    (written,) = [q["sql"] for q in queries.captured_queries if "INSERT INTO" in q["sql"]]
    assert re.search(r"VALUES \(\$1, \$2, ", written) and "%s" not in written
    assert moves_at_first_ply(matches) == {m.pk: 1 for m in matches}
    for match in matches:
        match.refresh_from_db()
        assert (match.ply, match.snapshot_ply) == (1, 1)
        assert match.to_move == load_state(match.snapshot).to_move
