"""Tournaments through real Celery worker processes on the configured broker (Redis in CI).

The worker reads the test database (PostgreSQL: a worker process cannot share SQLite's
in-memory test database), so the tests commit their rows (``transaction=True``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bots.tasks import resume_abandoned_turns
from games.models import Match, Move
from tests.processes import worker_database_url
from tournaments.creation import tournament_create
from tournaments.models import RatedMatch, RatingFit, Tournament, TournamentMatch
from tournaments.ratings import ratings_recompute
from tournaments.services import tournament_start, tournaments_watchdog

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

BASE_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def own_queue():
    """Send this test's tasks to a queue of its own, which only its workers read.

    Another worker on the same broker (a test of another app, a benchmark, a second CI
    run) would otherwise take tasks whose rows are not in its database.
    """
    from cardserver.celery import settings_override

    queue = f"test-tournaments-{uuid.uuid4().hex}"
    with settings_override(task_default_queue=queue):
        yield queue


def start_worker(tmp_path: Path, concurrency: int = 2, **settings: str) -> subprocess.Popen:
    """Start a prefork worker in a process group of its own, on the test database and queue,
    with ``settings`` as extra environment variables."""
    from cardserver import celery_app

    environment = dict(os.environ)
    environment.update(settings)
    environment.update(
        CELERY_TASK_DEFAULT_QUEUE=celery_app.conf.task_default_queue,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
        DATABASE_URL=worker_database_url(),
        CARDSERVER_VAR_DIR=str(tmp_path / "var"),
        LOG_LEVEL="WARNING",
    )
    environment.pop("CELERY_TASK_ALWAYS_EAGER", None)
    queue = celery_app.conf.task_default_queue
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--pool=prefork",
         f"--concurrency={concurrency}", "--without-mingle", "--without-gossip",
         "--loglevel=WARNING", "-Q", f"{queue},{queue}-interactive"],
        cwd=BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "worker.log", "ab"),  # noqa: SIM115 - the worker owns it
        start_new_session=True,
    )  # fmt: skip


def stop_worker(worker: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
    worker.wait(timeout=60)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status:
                found.append(int(entry.name))
    return found


def wait_for(predicate, *, timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    states = list(TournamentMatch.objects.values_list("index", "status", "attempts", "match__ply"))
    pytest.fail(
        f"timed out waiting for {what}; matches {states}; worker log:\n{log.read_text()[-3000:]}"
    )


def done(tournament: Tournament) -> int:
    return Tournament.objects.values_list("matches_done", flat=True).get(pk=tournament.pk)


def playing(tournament: Tournament) -> dict[int, list]:
    """Return the moves so far of the tournament's matches in play, by match id."""
    return {
        tm.match_id: list(tm.match.moves.order_by("ply").values_list("move", flat=True))
        for tm in TournamentMatch.objects.filter(tournament=tournament, status="running")
        .exclude(match=None)
        .select_related("match")
        if tm.match.status == Match.Status.ACTIVE and tm.match.ply > 0
    }


def assert_every_match_ended_exactly_once(tournament: Tournament) -> None:
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    assert tournament.matches_done == tournament.matches_total
    tms = TournamentMatch.objects.filter(tournament=tournament)
    assert set(tms.values_list("status", flat=True)) == {"finished"}
    match_ids = set(tms.values_list("match_id", flat=True))
    assert len(match_ids) == tournament.matches_total
    # No match was created twice: every match of the database belongs to one scheduled match.
    assert set(Match.objects.values_list("pk", flat=True)) == match_ids
    assert not Match.objects.exclude(status=Match.Status.FINISHED).exists()
    for match in Match.objects.all():
        assert list(Move.objects.filter(match=match).values_list("ply", flat=True)) == list(
            range(match.ply)
        )
    assert RatedMatch.objects.count() == tournament.matches_total
    assert ratings_recompute().mismatches == []


@pytest.mark.timeout(900)
def test_worker_plays_an_eight_bot_tournament(bot_factory, tmp_path):
    players = ["random", "random", "random", "greedy", "greedy", "greedy", "random", "greedy"]
    bots = [bot_factory(player) for player in players]
    tournament = tournament_create(
        creator=None, name="ci", game="durak", players=2, bots=bots, games_per_pairing=4,
        move_time_limit=10.0, rated=True,
    )  # fmt: skip
    assert tournament.matches_total == 112
    worker = start_worker(tmp_path)
    try:
        tournament_start(tournament_id=tournament.pk)
        wait_for(
            lambda: Tournament.objects.get(pk=tournament.pk).status == "finished",
            timeout=600, what="the tournament to finish", log=tmp_path / "worker.log",
        )  # fmt: skip
        # The last round's refit runs after the tournament is marked finished.
        wait_for(
            lambda: RatingFit.objects.filter(pool="durak-2p", matches=112).exists(),
            timeout=120, what="the refit after the last round", log=tmp_path / "worker.log",
        )  # fmt: skip
    finally:
        stop_worker(worker)

    assert_every_match_ended_exactly_once(tournament)
    assert RatingFit.objects.filter(pool="durak-2p").count() >= 2  # after each round


@pytest.mark.timeout(900)
def test_killed_workers_resume_matches_from_their_logs_and_end_each_once(bot_factory, tmp_path):
    bots = [bot_factory(player) for player in ["random", "greedy", "random", "greedy"]]
    tournament = tournament_create(
        creator=None, name="kill", game="durak", players=2, bots=bots, games_per_pairing=8,
        move_time_limit=10.0, rated=True,
    )  # fmt: skip
    log = tmp_path / "worker.log"

    def start_worker_writing_each_move() -> subprocess.Popen:
        # A write per move keeps matches in progress most of the time they are played, so
        # that a kill lands in one (built-in moves are otherwise written 16 at a time, and
        # a 2-player deal takes a few writes, milliseconds apart).
        return start_worker(tmp_path, BOTS_BUILTIN_MOVES_PER_WRITE="1")

    worker = start_worker_writing_each_move()
    try:
        tournament_start(tournament_id=tournament.pk)

        # A pool process dies mid-task: the worker rejects the task, which comes back.
        wait_for(lambda: done(tournament) >= 4, timeout=300, what="4 matches", log=log)
        for child in children(worker.pid)[:1]:
            os.kill(child, signal.SIGKILL)

        # The whole worker dies in the middle of a match: its unacknowledged tasks wait in
        # the broker. (A match may end between the look and the kill: then again.)
        in_progress = {}
        for _ in range(5):
            wait_for(
                lambda: done(tournament) >= 12 and bool(playing(tournament)),
                timeout=300, what="a match in play", log=log,
            )  # fmt: skip
            stop_worker(worker, signal.SIGKILL)
            in_progress = playing(tournament)
            if in_progress:
                break
            worker = start_worker_writing_each_move()
            tournaments_watchdog(stale_after=0)
        assert in_progress, "no match was in play when the worker was killed"
        assert done(tournament) < tournament.matches_total

        # The restarted worker writes as it does by default.
        worker = start_worker(tmp_path)
        restarted = time.monotonic()
        # What beat does every 10 s (here every 5 s), with its default limits: hand the
        # turns whose dead driver's claim lapsed to a worker again, and record the matches
        # that ended while no task of theirs was alive to record them.
        def beat() -> None:
            resume_abandoned_turns()
            tournaments_watchdog()

        beat()
        watched = [time.monotonic()]
        resumed: dict[int, float] = {}

        def finished() -> bool:
            if time.monotonic() - watched[0] > 5:
                beat()
                watched[0] = time.monotonic()
            for match_id, moves in in_progress.items():
                if match_id not in resumed and Move.objects.filter(
                    match_id=match_id, ply__gte=len(moves)
                ).exists():
                    resumed[match_id] = time.monotonic() - restarted
            return Tournament.objects.get(pk=tournament.pk).status == "finished"

        wait_for(finished, timeout=600, what="the tournament to finish", log=log)
    finally:
        stop_worker(worker)

    assert_every_match_ended_exactly_once(tournament)
    # Taken up within 30 s of the restart (the driver's claim lapses within 10 s, and the
    # sweep for lapsed claims hands the turn over), not after 300 s.
    assert set(resumed) == set(in_progress) and max(resumed.values()) < 30, resumed
    # Matches that were in progress went on from their logs, not from scratch.
    for match_id, moves in in_progress.items():
        after = list(
            Move.objects.filter(match_id=match_id).order_by("ply").values_list("move", flat=True)
        )
        assert after[: len(moves)] == moves
    # (Each was finished by a task of the restarted worker: a turn handed over for its
    # lapsed claim, or a turn notice of the match that was still queued.)
    assert all(
        Match.objects.get(pk=match_id).ply >= len(moves) for match_id, moves in in_progress.items()
    )


@pytest.mark.timeout(600)
def test_whole_worker_killed_gives_its_match_back_to_the_next_worker_without_beat(
    bot_factory, tmp_path
):
    """A worker killed outright (SIGKILL to its whole process group: no connection closes
    cleanly) held a match's task unacknowledged. Redis gives it to the next worker once the
    dead one stops renewing it (cardserver/broker_held.py), with no help from beat: the
    match goes on from its log, counted one start, and nothing is aborted or forfeited.
    Before, the task came back only after the two-hour visibility timeout."""
    bots = [bot_factory("greedy"), bot_factory("strong")]
    tournament = tournament_create(
        creator=None, name="killed", game="durak", players=2, bots=bots, games_per_pairing=4,
        move_time_limit=10.0, rated=False,
    )  # fmt: skip
    log = tmp_path / "worker.log"
    in_progress: dict[int, list] = {}
    worker = start_worker(tmp_path, BOTS_BUILTIN_MOVES_PER_WRITE="1")
    try:
        tournament_start(tournament_id=tournament.pk)
        for _ in range(5):
            wait_for(lambda: bool(playing(tournament)), timeout=300, what="a match in play",
                     log=log)  # fmt: skip
            stop_worker(worker, signal.SIGKILL)
            in_progress = playing(tournament)
            if in_progress:
                break
            # The match ended between the look and the kill: its task was acknowledged.
            worker = start_worker(tmp_path, BOTS_BUILTIN_MOVES_PER_WRITE="1")
        assert in_progress, "no match was in play when the worker was killed"

        worker = start_worker(tmp_path)
        wait_for(
            lambda: Tournament.objects.get(pk=tournament.pk).status == "finished",
            timeout=400, what="the tournament to finish", log=log,
        )  # fmt: skip
    finally:
        stop_worker(worker)

    matches = TournamentMatch.objects.filter(tournament=tournament).select_related("match")
    assert {(tm.status, tm.attempts) for tm in matches} == {("finished", 1)}
    assert {(tm.match.status, tm.match.forfeit_seat) for tm in matches} == {("finished", None)}
    for match_id, moves in in_progress.items():
        after = list(
            Move.objects.filter(match_id=match_id).order_by("ply").values_list("move", flat=True)
        )
        assert after[: len(moves)] == moves and len(after) > len(moves)
