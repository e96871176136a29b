"""On both shapes, recovery acts on a dead worker, not on a long queue: the matches a
killed worker was playing go on from their move logs once its claims lapse, and while no
CPU worker takes the queue for 40 s (the built-in replies to an HTTP bot wait in it, with
no claim) nothing counts an attempt or gives a match up. Before, the watchdog sent every
match that had not moved for 15 s again, and each of those starts counted an attempt."""

from __future__ import annotations

import os
import signal
import time

import pytest

from benchmarks.harness import stop_process_group
from tests.shapes.arena import SHAPE_PARAMS, arena_of
from tests.shapes.test_moves_at_once import instant
from tests.tournaments.test_real_worker import children

pytestmark = [pytest.mark.real_services, pytest.mark.timeout(900)]

MATCHES_IN_PLAY = "from tests.shapes.scenarios import matches_in_play\nmatches_in_play()"


@pytest.fixture(params=SHAPE_PARAMS)
def arena(request, tmp_path):
    # A write per move keeps a match in progress most of the time it is played, so that
    # the kill lands in one.
    arena = arena_of(request.param, tmp_path / request.param, BOTS_BUILTIN_MOVES_PER_WRITE="1")
    try:
        yield arena
    finally:
        arena.stop()


def test_worker_killed_mid_turn_is_recovered_and_a_long_queue_costs_no_attempt(
    arena, http_bot
):
    url, _server = http_bot(instant)
    arena.start("calls")
    arena.run("from tests.shapes.scenarios import tournament_start\n"
              f"tournament_start(games=4, bot_url={url!r})")  # fmt: skip
    in_play: dict[str, list] = {}
    for _ in range(5):
        worker = arena.start("cpu")
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not arena.run(MATCHES_IN_PLAY):
            time.sleep(0.5)
        # A pool process dies mid-match (its claim lapses: the evidence); then the worker
        # stops (its unacknowledged messages go back to the queue on both brokers; a
        # whole worker killed on Redis: tests/tournaments/test_real_worker.py).
        for child in children(worker.pid):
            os.kill(child, signal.SIGKILL)
        stop_process_group(worker)
        # The matches still in play once the worker is dead (one may end between the look
        # and the kill: then again).
        in_play = arena.run(MATCHES_IN_PLAY)
        if in_play:
            break
    assert in_play, "no match was in play when the worker was killed" + arena.logs()

    # No CPU worker reads the queue for 40 s: the dead worker's claims lapse and its turns
    # are sent again, and wait; the built-in replies to the HTTP bot wait too.
    waited = arena.run(
        "from tests.shapes.scenarios import beat_duties\nbeat_duties(seconds=40)"
    )
    assert {m["status"] for m in waited["matches"]} <= {"pending", "running", "finished"}
    assert max(m["attempts"] for m in waited["matches"]) <= 1, waited

    arena.start("cpu")
    done = arena.run(
        "from tests.shapes.scenarios import beat_duties\n"
        "beat_duties(seconds=300, until_finished=True)"
    )
    after = arena.run("from tests.shapes.scenarios import moves_of\n"
                      f"moves_of({[int(m) for m in in_play]})")  # fmt: skip

    assert done["tournaments"] == ["finished"], done
    assert {m["status"] for m in done["matches"]} == {"finished"}, done
    assert max(m["attempts"] for m in done["matches"]) == 1, done
    # The matches in play at the kill went on from their logs, not from scratch.
    for match_id, moves in in_play.items():
        assert after[match_id][: len(moves)] == moves
        assert len(after[match_id]) > len(moves)
