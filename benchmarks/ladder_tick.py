"""Time the ladder's tick with many bots in every pool.

    python -m benchmarks.ladder_tick [--bots 1000] [--runs 5] [--sqlite]

A scratch database (PostgreSQL on ``--server``, or an SQLite file) holds ``--bots``
HTTP bots of 100 owners (so the owner rule has work to do), each rated and fitted in
every pool with random ratings and intervals. It times, ``--runs`` times:

1. ``informative_table`` alone on the bots of one pool (the pure choice), and beside it
   ``closest_table``, the ladder's first rule, as the baseline;
2. ``ladder_plan``: the tables of one tick over every shape in ``LADDER_TABLES``, with
   its reads (bots, fits, ratings, unfinished ladder matches);
3. ``ladder_tick``: the plan and the first deal of each table created (no task sent).

It prints the median and every run, in milliseconds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from benchmarks import harness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    harness.scratch_arguments(parser)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    with harness.django_on_scratch_database(options.server, sqlite=options.sqlite):
        figures = run(options)
    for name, values in figures.items():
        print(f"{name}: median {statistics.median(values):.1f} ms "
              f"({', '.join(f'{v:.1f}' for v in values)})")  # fmt: skip
    harness.write_json(options.json, figures)


def run(options) -> dict[str, list[float]]:
    from django.contrib.auth import get_user_model

    from bots.models import Bot
    from tournaments.dispatch import inline_play
    from tournaments.ladder import ladder_plan, ladder_tick
    from tournaments.models import FitEntry, Rating, RatingFit
    from tournaments.pairing import Candidate, closest_table, informative_table
    from tournaments.pools import POOLS

    rng = random.Random(1)
    owners = [get_user_model().objects.create(username=f"owner{i}") for i in range(100)]
    Bot.objects.update(enabled=False)
    bots = Bot.objects.bulk_create(
        Bot(name=f"bench-{i}", owner=owners[i % 100], kind=Bot.Kind.HTTP,
            url="http://127.0.0.1:1/", games=["durak", "volynshchik"], healthy=True)
        for i in range(options.bots)
    )  # fmt: skip
    candidates = []
    for pool in POOLS:
        fit = RatingFit.objects.create(
            pool=pool, matches=0, through_sequence=0, bootstraps=0, anchor_rating=1000
        )
        lines = []
        for bot in bots:
            rating = rng.gauss(1500, 200)
            half = rng.uniform(20, 300)
            lines.append((bot, rating, half, rng.randrange(1, 500)))
        lines.sort(key=lambda line: -line[1])
        FitEntry.objects.bulk_create(
            FitEntry(fit=fit, bot=bot, rank=rank, rating=r, low=r - h, high=r + h, games=g,
                     losses=0, provisional=False, los=rng.uniform(0.5, 1.0))
            for rank, (bot, r, h, g) in enumerate(lines, start=1)
        )  # fmt: skip
        Rating.objects.bulk_create(
            Rating(pool=pool, bot=bot, elo=r, games=g) for bot, r, _, g in lines
        )
        if pool == POOLS[0]:
            candidates = [
                Candidate(key=bot.pk, owner=bot.owner_id, builtin=False, rating=r,
                          games=g, low=r - h, high=r + h)
                for bot, r, h, g in lines
            ]  # fmt: skip

    figures: dict[str, list[float]] = {"closest_table": [], "informative_table": [],
                                       "ladder_plan": [], "ladder_tick": []}  # fmt: skip
    for number in range(options.runs):
        started = time.perf_counter()
        closest_table(candidates, 4)
        figures["closest_table"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        informative_table(candidates, 4, random.Random(number))
        figures["informative_table"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        ladder_plan(rng=random.Random(number))
        figures["ladder_plan"].append((time.perf_counter() - started) * 1000)
        with inline_play():
            started = time.perf_counter()
            created = ladder_tick(seed=number)
            figures["ladder_tick"].append((time.perf_counter() - started) * 1000)
        # Finish the tick's deals so that the next run sees every bot free again.
        from games.models import Match

        Match.objects.filter(pk__in=created).update(status=Match.Status.ABORTED)
    return figures


if __name__ == "__main__":
    main()
