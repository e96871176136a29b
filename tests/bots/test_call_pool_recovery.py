"""A bot-calls worker killed with calls in flight: its matches are taken up again within
30 s of a worker being there, whatever the bots' time limits (the pool's heartbeat keeps
a call's claim only while its process lives), and no move is played twice."""

from __future__ import annotations

import signal
import time

import pytest

from bots import tasks as bot_tasks
from games.models import Match, Move
from games.seating import SeatHolder
from games.services import match_create
from tests.bots.test_call_pool import (  # noqa: F401 - the fixtures
    first_legal_move,
    make_bots,
    queue,
    stop,
    wait_until,
    workers,
)

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

# Long enough that a claim held for the bot's whole limit would outlast the 30 s.
TIME_LIMIT = 30.0
THINKS = 2.0


def test_killed_bot_calls_worker_lets_its_matches_be_taken_up_within_30_s(
    user,
    http_bot,
    workers,  # noqa: F811 - the fixture imported above
    tmp_path,
):
    def slow(handler, request) -> None:
        handler.server.release.wait(THINKS)
        first_legal_move(handler, request)

    url, server = http_bot(slow)
    one, other = make_bots(user, url.removesuffix("/move"), "slow", 2)
    match = match_create(
        creator=user, game="durak", players=2, move_time_limit=TIME_LIMIT,
        seats=[SeatHolder(bot=one), SeatHolder(bot=other)],
    )  # fmt: skip
    workers("cpu")
    calls = workers("calls")
    # Killed while the bot thinks over its second move: the first one was played.
    wait_until(
        lambda: len(server.requests) == 2, timeout=60, what="the second call",
        tmp_path=tmp_path,
    )  # fmt: skip
    stop(calls, signal.SIGKILL)
    workers("calls")
    restarted = time.monotonic()

    def moved_on() -> bool:
        # Beat's sweep, run at every look here (every 10 s in production).
        bot_tasks.resume_abandoned_turns()
        return Move.objects.filter(match=match, ply=1).exists()

    wait_until(moved_on, timeout=60, what="the match to move on", tmp_path=tmp_path)

    assert time.monotonic() - restarted < 30
    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE and match.forfeit_seat is None
    plies = list(Move.objects.filter(match=match).values_list("ply", flat=True))
    assert plies == sorted(set(plies))
    # The killed call's turn was asked again, once.
    assert [r["body"]["type"] for r in server.requests[:3]] == ["move"] * 3
