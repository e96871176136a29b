"""Time a full recompute of the ratings from an archive of rated matches.

    python -m benchmarks.ratings [--matches 100000] [--bots 8] [--runs 3]

Needs a database it may fill: it creates a scratch PostgreSQL database (``--server``,
default ``postgres://postgres@127.0.0.1:5432``) and drops it afterwards, or, with
``--sqlite``, a scratch SQLite file. It writes an archive of ``--matches`` finished,
rated 2-player Durak matches between ``--bots`` bots whose strengths are 25 Elo apart,
with the ledger and rating changes that applying them one by one stores (built in bulk:
the archive is the input, not what is timed). Then, ``--runs`` times, it times what
``manage.py recompute_ratings --fit`` does:

1. ``ratings_recompute()``: read every match and seat of the archive, replay the Elo
   updates in the ledger's order, compare with every stored rating change and rating;
2. ``ratings_fit(pool=...)``: read the pool's results, fit Bradley-Terry, bootstrap
   (``RATING_BOOTSTRAPS`` resamples), store the fit.

It prints the median and every run, and fails if the recompute finds a difference.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from benchmarks import harness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    harness.scratch_arguments(parser)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()

    with harness.django_on_scratch_database(options.server, sqlite=options.sqlite):
        run(options)


def run(options) -> None:
    from django.conf import settings
    from django.db import connection

    started = time.perf_counter()
    archive(options.matches, options.bots)
    print(
        f"Archive: {options.matches} rated matches of {options.bots} bots written in "
        f"{time.perf_counter() - started:.1f} s ({connection.vendor})"
    )

    from tournaments.ratings import ratings_fit, ratings_recompute

    totals, recomputes, fits = [], [], []
    for _ in range(options.runs):
        started = time.perf_counter()
        report = ratings_recompute()
        middle = time.perf_counter()
        fit = ratings_fit(pool="durak-2p", force=True)
        ended = time.perf_counter()
        if report.mismatches or report.matches != options.matches:
            sys.exit(f"recompute differs: {report.matches} matches, {report.mismatches[:5]}")
        recomputes.append(middle - started)
        fits.append(ended - middle)
        totals.append(ended - started)
    entries = list(fit.entries.order_by("rank").select_related("bot"))
    print(
        f"Recompute of {options.matches} matches, Elo replay + batch fit with "
        f"{settings.RATING_BOOTSTRAPS} bootstraps, median of {options.runs}: "
        f"{statistics.median(totals):.2f} s "
        f"(replay and compare {statistics.median(recomputes):.2f} s, "
        f"fit {statistics.median(fits):.2f} s; runs: "
        + ", ".join(f"{t:.2f}" for t in totals)
        + ")"
    )
    print("Fitted order: " + " > ".join(f"{e.bot.name} {e.rating:.0f}" for e in entries))
    harness.write_json(options.json, {
        "matches": options.matches, "bootstraps": settings.RATING_BOOTSTRAPS,
        "database": connection.vendor, "total_s": totals, "replay_s": recomputes,
        "fit_s": fits,
    })  # fmt: skip


def archive(matches: int, bots: int) -> None:
    """Write finished rated matches and the ratings that applying them in order gives."""
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from bots.models import Bot
    from cardkit.stats import elo
    from games.models import Match, Seat
    from tournaments.models import RatedMatch, Rating, RatingChange, RatingPool

    owner = get_user_model().objects.create_user("bench-owner")
    players = [
        Bot.objects.create(
            name=f"bench-{i}", owner=owner, kind="builtin", builtin="random", games=["durak"]
        )
        for i in range(bots)
    ]
    strength = {bot.pk: 1500 + 25 * i for i, bot in enumerate(players)}
    ids = list(strength)
    rng = random.Random(1)
    start = timezone.now() - timedelta(days=30)
    ratings = dict.fromkeys(ids, elo.INITIAL_RATING)
    counts = {bot_id: [0, 0, 0] for bot_id in ids}
    batch = 5000
    with transaction.atomic():
        for first in range(0, matches, batch):
            size = min(batch, matches - first)
            tables, losers = [], []
            for _ in range(size):
                table = rng.sample(ids, 2)
                p_first_loses = 1 - elo.expected_score(strength[table[0]], strength[table[1]])
                loser = None if rng.random() < 0.01 else int(rng.random() >= p_first_loses)
                tables.append(table)
                losers.append(loser)
            created = Match.objects.bulk_create(
                Match(
                    game="durak", players=2, deck_size=36, status="finished", rated=True,
                    loser=loser, result={"loser": loser, "out_order": []},
                    end_reason="normal", finished_at=start + timedelta(seconds=first + n),
                    ply=0, rating_applied=True,
                )
                for n, loser in enumerate(losers)
            )  # fmt: skip
            Seat.objects.bulk_create(
                Seat(match=match, index=i, bot_id=bot_id)
                for match, table in zip(created, tables, strict=True)
                for i, bot_id in enumerate(table)
            )
            entries, changes = [], []
            for n, (match, table, loser) in enumerate(zip(created, tables, losers, strict=True)):
                sequence = first + n + 1
                before = [ratings[b] for b in table]
                after = elo.elo_update(before, loser, k=16.0)
                entries.append(
                    RatedMatch(
                        match=match, pool="durak-2p", sequence=sequence,
                        loser_bot_id=table[loser] if loser is not None else None,
                    )
                )  # fmt: skip
                for seat, bot_id in enumerate(table):
                    changes.append(
                        RatingChange(
                            match=match, bot_id=bot_id, pool="durak-2p", sequence=sequence,
                            seat=seat, before=before[seat], after=after[seat],
                            lost=seat == loser,
                        )
                    )  # fmt: skip
                    ratings[bot_id] = after[seat]
                    counts[bot_id][0] += 1
                    counts[bot_id][1] += seat == loser
                    counts[bot_id][2] += loser is None
            RatedMatch.objects.bulk_create(entries)
            RatingChange.objects.bulk_create(changes)
        Rating.objects.bulk_create(
            Rating(pool="durak-2p", bot_id=b, elo=ratings[b], games=c[0], losses=c[1], draws=c[2])
            for b, c in counts.items()
        )
        RatingPool.objects.filter(key="durak-2p").update(matches_applied=matches)


if __name__ == "__main__":
    main()
