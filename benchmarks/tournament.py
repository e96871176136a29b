"""Throughput of a tournament of built-in `random` bots through real Celery workers.

    python -m benchmarks.tournament [--workers 1,2] [--bots 8] [--games 8] [--runs 3]

Creates a scratch PostgreSQL database (``--server``, default
``postgres://postgres@127.0.0.1:5432``; dropped afterwards) and uses a Redis database as
the broker (``--broker``, default ``redis://127.0.0.1:6379/12``) with a queue of its own.
For each worker count it starts ``celery worker --pool=prefork --concurrency=N``, runs a
rated 2-player Durak round-robin of ``--bots`` random bots with ``--games`` games per
pairing (8 bots, 8 games: 224 matches in 4 rounds), and times it from the start to the
last match recorded. It prints matches per minute, the median of ``--runs`` runs, and
the figure for the same tournament played in one process without Celery.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2", help="Worker process counts to try.")
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--games", type=int, default=8, help="Games per pairing.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--server", default=harness.POSTGRES)
    parser.add_argument("--broker", default=f"{harness.REDIS}/12")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()

    with (
        tempfile.TemporaryDirectory() as var_dir,
        harness.scratch_database(options.server) as database,
        harness.broker_queue(options.broker, required=True) as broker,
    ):
        env = harness.environment(database=database, broker=broker, var_dir=Path(var_dir))
        harness.django_setup(env)
        run(options, env, broker)


def run(options, env: dict, broker: harness.Broker) -> None:
    from django.contrib.auth import get_user_model

    from bots.models import Bot

    owner = get_user_model().objects.create_user("bench-owner")
    bots = [
        Bot.objects.create(
            name=f"bench-random-{i}", owner=owner, kind="builtin", builtin="random",
            games=["durak"],
        )
        for i in range(options.bots)
    ]  # fmt: skip
    print(f"{os.cpu_count()} cores; PostgreSQL, Redis; {options.bots} random bots, "
          f"{options.games} games per pairing")  # fmt: skip

    figures: dict = {"matches": None, "workers": {}, "inline": None}
    for workers in [int(n) for n in options.workers.split(",")]:
        rates = []
        for _ in range(options.runs):
            rates.append(celery_run(bots, options, workers, env, broker))
        figures["workers"][workers] = {"median": statistics.median(rates), "runs": rates}
        print(
            f"{workers} worker process(es): {statistics.median(rates):.0f} matches/min "
            f"(median of {len(rates)}: " + ", ".join(f"{r:.0f}" for r in rates) + ")"
        )
    rates = [inline_run(bots, options) for _ in range(options.runs)]
    figures["inline"] = {"median": statistics.median(rates), "runs": rates}
    figures["matches"] = len(bots) * (len(bots) - 1) // 2 * options.games
    harness.write_json(options.json, figures)
    print(
        f"In one process, no Celery: {statistics.median(rates):.0f} matches/min "
        f"(median of {len(rates)}: " + ", ".join(f"{r:.0f}" for r in rates) + ")"
    )


def create(bots, options):
    from tournaments.creation import tournament_create

    return tournament_create(
        creator=None, name="bench", game="durak", players=2, bots=bots,
        games_per_pairing=options.games, move_time_limit=10.0, rated=True,
    )  # fmt: skip


def celery_run(bots, options, workers: int, env: dict, broker: harness.Broker) -> float:
    from cardserver import celery_app
    from tournaments.models import Tournament
    from tournaments.services import tournament_start

    broker.empty()
    node = f"{broker.queue}-{workers}@{socket.gethostname()}"
    worker = harness.start(harness.celery_worker(node=node, concurrency=workers), env=env)
    try:
        harness.wait_until(
            lambda: bool(celery_app.control.ping(destination=[node], timeout=0.5)),
            timeout=60,
            what="the worker to start",
        )
        tournament = create(bots, options)
        tournament_start(tournament_id=tournament.pk)
        deadline = time.monotonic() + 1800
        while True:
            tournament.refresh_from_db()
            if tournament.status == Tournament.Status.FINISHED:
                break
            if time.monotonic() > deadline:
                sys.exit(f"not finished after 30 minutes: {tournament.matches_done} matches done")
            time.sleep(0.05)
        finished = Tournament.objects.get(pk=tournament.pk).finished_at
        elapsed = (finished - tournament.started_at).total_seconds()
        return 60 * tournament.matches_total / elapsed
    finally:
        harness.stop_process_group(worker, timeout=60)


def inline_run(bots, options) -> float:
    from cardserver.celery import eager_tasks
    from tournaments.services import tournament_play_inline

    tournament = create(bots, options)
    with eager_tasks():
        started = time.perf_counter()
        tournament_play_inline(tournament_id=tournament.pk)
        elapsed = time.perf_counter() - started
    return 60 * tournament.matches_total / elapsed


if __name__ == "__main__":
    main()
