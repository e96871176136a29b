"""A whole sequential test on real Celery worker processes (PostgreSQL, the broker)."""

from __future__ import annotations

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
