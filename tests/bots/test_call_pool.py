"""HTTP bots' calls on the I/O pool: a prefork CPU worker (two processes, as in production)
and a `bot-calls` worker (its event loop), on the test database and a queue of their own,
with real HTTP bots on 127.0.0.1. A slow bot holds a coroutine of the pool, never a CPU
process, so it never costs another bot its turn; the arena's delay is never a bot's
forfeit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from bots import services
from bots.models import Bot, BotTurnLease
from games.models import Match, Move
from games.seating import SeatHolder
from games.services import match_create
from tests.bots.conftest import reply
from tests.processes import worker_database_url

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

BASE_DIR = Path(__file__).resolve().parents[2]
SECRET = "pool-bot-secret"
TIME_LIMIT = 1.0


@pytest.fixture
def queue():
    """This test's own queue (and so its own call queue, ``<queue>-bot-calls``)."""
    from cardserver.celery import settings_override

    name = f"test-pool-{uuid.uuid4().hex}"
    with settings_override(task_default_queue=name):
        yield name


@pytest.fixture
def workers(tmp_path, queue):
    """Return ``start(kind, **environment)``: a CPU worker (``"cpu"``) or a bot-calls worker
    (``"calls"``) in a process group of its own; all are stopped when the test ends."""
    started: list[subprocess.Popen] = []

    def start(kind: str, **extra: str) -> subprocess.Popen:
        environment = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
        environment.update(
            CELERY_TASK_DEFAULT_QUEUE=queue,
            DJANGO_SETTINGS_MODULE="cardserver.settings",
            DATABASE_URL=worker_database_url(),
            CARDSERVER_VAR_DIR=str(tmp_path / "var"),
            LOG_LEVEL="WARNING",
            **extra,
        )
        if kind == "cpu":
            options = ["--pool=prefork", "--concurrency=2", "-Q", f"{queue},{queue}-interactive"]
        else:
            options = ["--pool=threads", "--concurrency=4", "-Q", f"{queue}-bot-calls"]
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--without-mingle",
             "--without-gossip", "--loglevel=WARNING", *options],
            cwd=BASE_DIR, env=environment, stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / f"{kind}.log", "ab"),  # noqa: SIM115 - the worker owns it
            start_new_session=True,
        )  # fmt: skip
        started.append(worker)
        return worker

    yield start
    for worker in started:
        stop(worker)


def stop(worker: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
    worker.wait(timeout=60)


def first_legal_move(handler, request) -> None:
    reply(handler, json.dumps({"move": request["body"]["legal_moves"][0]}).encode())


def make_bots(user, url_base: str, prefix: str, count: int) -> list[Bot]:
    return [
        Bot.objects.create(
            name=f"{prefix}-{index}", owner=user, kind=Bot.Kind.HTTP,
            url=f"{url_base}/{prefix}/{index}", secret=SECRET, games=["durak"],
        )  # fmt: skip
        for index in range(count)
    ]


def start_matches(bots: list[Bot], opponent: Bot, time_limit: float) -> list[Match]:
    """Start a match of each bot against ``opponent``, created by the bot's owner."""
    return [
        match_create(
            creator=bot.owner, game="durak", players=2, move_time_limit=time_limit,
            seats=[SeatHolder(bot=bot), SeatHolder(bot=opponent)],
        )  # fmt: skip
        for bot in bots
    ]


def wait_until(predicate, *, timeout: float, what: str, tmp_path: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    logs = "\n".join(f"{p.name}:\n{p.read_text()[-2000:]}" for p in tmp_path.glob("*.log"))
    pytest.fail(f"timed out waiting for {what}\n{logs}")


def all_ended(matches: list[Match]) -> bool:
    ids = [match.pk for match in matches]
    return not Match.objects.filter(pk__in=ids, status=Match.Status.ACTIVE).exists()


def test_fifty_sleepers_cost_ten_good_bots_no_turn(user, http_bot, workers, tmp_path):
    def behaviour(handler, request) -> None:
        if request["path"].startswith("/sleep/"):
            handler.server.release.wait(TIME_LIMIT + 1.0)
        first_legal_move(handler, request)

    url, _server = http_bot(behaviour)
    base = url.removesuffix("/move")
    sleepers = make_bots(user, base, "sleep", 50)
    good = make_bots(user, base, "good", 10)
    random_bot = next(bot for bot in services.builtin_bots_ensure() if bot.name == "random")
    workers("cpu")
    workers("calls")

    # The HTTP bot sits in seat 0 and so moves first in about half the deals.
    sleeping = start_matches(sleepers, random_bot, TIME_LIMIT)
    playing = start_matches(good, random_bot, TIME_LIMIT)
    wait_until(
        lambda: all_ended(sleeping + playing), timeout=240, what="every match to end",
        tmp_path=tmp_path,
    )  # fmt: skip

    for match in sleeping:
        match.refresh_from_db()
        assert (match.end_reason, match.forfeit_seat) == ("timeout", 0), match.forfeit_reason
    for match in playing:
        match.refresh_from_db()
        assert match.status == Match.Status.FINISHED
        assert match.forfeit_seat is None, (match.end_reason, match.forfeit_reason)
    asked = Move.objects.filter(match__in=playing, seat=0)
    assert asked.exists() and not asked.filter(sent_at=None).exists()
    assert not BotTurnLease.objects.exists()


def test_turn_queued_by_the_arena_past_the_bots_limit_does_not_lose(
    user, http_bot, workers, tmp_path
):
    url, _server = http_bot(first_legal_move)
    bots = make_bots(user, url.removesuffix("/move"), "patient", 3)
    random_bot = next(bot for bot in services.builtin_bots_ensure() if bot.name == "random")
    workers("cpu")
    # A limit the instant bot keeps even on a loaded machine (at 0.5 s, one forfeited on
    # time at load 13: its answer waited for a core), and which the queue still outlasts.
    limit = 1.5
    matches = start_matches(bots, random_bot, limit)

    # No pool is there to send the calls yet: they wait in the queue, past the limit.
    wait_until(
        lambda: BotTurnLease.objects.filter(calling_owner=user).count() == len(matches),
        timeout=60, what="the bots' calls to be queued", tmp_path=tmp_path,
    )  # fmt: skip
    time.sleep(limit + 1)
    workers("calls")
    wait_until(lambda: all_ended(matches), timeout=120, what="the matches", tmp_path=tmp_path)

    for match in matches:
        match.refresh_from_db()
        assert match.forfeit_seat is None, (match.end_reason, match.forfeit_reason)
    first = Move.objects.filter(match__in=matches, seat=0).order_by("match_id", "ply")
    delays = [(m.sent_at - m.queued_at).total_seconds() for m in first if m.ply <= 1]
    assert delays and max(delays) > limit  # recorded as the arena's delay, not the bot's


def test_one_owners_calls_in_flight_stay_within_the_owner_share(
    user, user_factory, http_bot, workers, tmp_path
):
    lock = threading.Lock()
    in_flight = {"now": 0, "most": 0, "served": 0}

    def slow(handler, request) -> None:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        time.sleep(0.3)
        with lock:
            in_flight["now"] -= 1
            in_flight["served"] += 1
        first_legal_move(handler, request)

    url, _server = http_bot(slow)
    bots = make_bots(user, url.removesuffix("/move"), "many", 6)
    other_url, other_server = http_bot(first_legal_move)
    other = make_bots(user_factory(), other_url.removesuffix("/move"), "other", 1)
    random_bot = next(bot for bot in services.builtin_bots_ensure() if bot.name == "random")
    # The share is a setting of the whole arena: the pool dispatches a match's next call.
    workers("cpu", BOTS_CALLS_PER_OWNER="2")
    workers("calls", BOTS_CALLS_PER_OWNER="2")
    matches = start_matches(bots, random_bot, 5.0)
    others = start_matches(other, random_bot, 5.0)

    wait_until(
        lambda: in_flight["served"] >= 12 and all_ended(others), timeout=120,
        what="12 calls of the owner and the other owner's match", tmp_path=tmp_path,
    )  # fmt: skip

    assert in_flight["most"] == 2
    assert not Match.objects.filter(pk__in=[m.pk for m in matches + others]).exclude(
        forfeit_seat=None
    ).exists()
