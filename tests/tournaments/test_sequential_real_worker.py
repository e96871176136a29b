"""A whole sequential test on real Celery worker processes (PostgreSQL, the broker)."""

from __future__ import annotations

import signal
import time

import pytest

from bots import services as bot_services
from bots import versions
from bots.models import Bot
from games.models import Match
from tests.tournaments.test_real_worker import own_queue, start_worker, stop_worker  # noqa: F401
from tournaments import sequential
from tournaments.models import RatingChange, SequentialPair, SequentialTest

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


@pytest.mark.timeout(600)
def test_a_weakened_greedy_is_rejected_against_greedy_on_a_real_worker(tmp_path, user_factory):
    builtins = {bot.name: bot for bot in bot_services.builtin_bots_ensure()}
    owner = user_factory()
    # The built-in greedy player with one move in ten drawn at random instead.
    sloppy = Bot.objects.create(
        name="sloppy", owner=owner, kind=Bot.Kind.BUILTIN, builtin="sloppy", games=["durak"]
    )
    versions.bot_version_first(bot=sloppy)
    worker = start_worker(tmp_path, concurrency=2)
    try:
        # Wide logistic bounds decide in about a dozen pairs (benchmarks.pairing's
        # distribution of greedy against sloppy: H1 in 1 of 2,000 simulated tests).
        test = sequential.sequential_test_create(
            user=owner, candidate="sloppy", baseline=builtins["greedy"].name,
            model="logistic", elo0=0, elo1=100, max_games=200, move_time_limit=5,
        )  # fmt: skip
        deadline = time.monotonic() + 480
        while time.monotonic() < deadline:
            test.refresh_from_db()
            if test.status != SequentialTest.Status.RUNNING:
                break
            time.sleep(0.5)
        else:
            log = (tmp_path / "worker.log").read_text()[-3000:]
            pytest.fail(f"the test did not end: {test.counts}, worker log:\n{log}")
        # Let pairs already sent finish or be failed as over.
        time.sleep(1.0)
    finally:
        stop_worker(worker)
    assert test.status == SequentialTest.Status.REJECTED, (test.counts, test.llr)
    assert sum(test.counts) == test.pairs_done == len(test.llr_history)
    ids = sequential.sequential_test_matches(test)
    played = Match.objects.filter(pk__in=ids)
    assert not played.filter(rated=True).exists() and not RatingChange.objects.exists()
    done = SequentialPair.objects.filter(test=test, status=SequentialPair.Status.DONE)
    assert done.count() == test.pairs_done
    for pair in done:
        assert pair.first.decks == pair.second.decks
        assert pair.first.status == pair.second.status == Match.Status.FINISHED


@pytest.mark.timeout(600)
def test_pairs_of_a_whole_worker_killed_go_on_on_the_next_worker_counting_the_dead_start(
    tmp_path, user_factory
):
    """A worker killed outright mid-pair (SIGKILL to its process group) held its pairs'
    tasks: Redis gives them to the next worker once the dead one stops renewing them
    (cardserver/broker_held.py), with no beat. Each pair it was playing counts one more
    attempt (the dead start), resumes its match from the log, and none fails. Before, they
    stayed running for the two-hour visibility timeout."""
    bot_services.builtin_bots_ensure()
    staff = user_factory(is_staff=True)
    worker = start_worker(tmp_path, BOTS_BUILTIN_MOVES_PER_WRITE="1")
    running: set[int] = set()
    try:
        test = sequential.sequential_test_create(
            user=staff, candidate="strong", baseline="greedy", max_games=8, trusted=True
        )
        for _ in range(5):
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not pairs_in_play(test):
                time.sleep(0.2)
            stop_worker(worker, signal.SIGKILL)
            # Every pair the dead worker had started, in a match or between its two.
            running = set(
                SequentialPair.objects.filter(test=test, status="running").values_list(
                    "pk", flat=True
                )
            )
            if pairs_in_play(test):
                break
            worker = start_worker(tmp_path, BOTS_BUILTIN_MOVES_PER_WRITE="1")
        assert running, "no pair was in play when the worker was killed"

        worker = start_worker(tmp_path)
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and SequentialPair.objects.filter(
            test=test, status__in=sequential.IN_FLIGHT
        ).exists():
            time.sleep(0.5)
    finally:
        stop_worker(worker)

    pairs = SequentialPair.objects.filter(test=test)
    assert {p.status for p in pairs} == {SequentialPair.Status.DONE}, list(
        pairs.values_list("index", "status", "attempts", "error")
    )
    assert {p.pk: p.attempts for p in pairs} == {p.pk: 2 if p.pk in running else 1 for p in pairs}
    played = Match.objects.filter(pk__in=sequential.sequential_test_matches(test))
    assert {(m.status, m.forfeit_seat) for m in played} == {(Match.Status.FINISHED, None)}


def pairs_in_play(test: SequentialTest) -> set[int]:
    """The running pairs of the test with a match in progress."""
    return {
        pair.pk
        for pair in SequentialPair.objects.filter(test=test, status="running")
        for match in (pair.first, pair.second)
        if match is not None and match.status == Match.Status.ACTIVE and match.ply > 2
    }
