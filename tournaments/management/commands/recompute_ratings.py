"""Recompute every Elo rating from the match archive and compare with the stored ones.

    python manage.py recompute_ratings [--fix] [--fit]

Exits with status 1 when a stored rating differs from the recomputation (unless
``--fix`` rewrote it). ``--fit`` also refits every pool's leaderboard.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from cardserver.progress import progress_bar
from tournaments.pools import POOLS
from tournaments.ratings import ratings_fit, ratings_recompute


class Command(BaseCommand):
    help = "Recompute all Elo ratings from the archive; optionally fix them and refit pools."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--fix", action="store_true", help="Rewrite ratings that differ.")
        parser.add_argument("--fit", action="store_true", help="Refit every pool too.")

    def handle(self, *args, **options) -> None:
        pools = POOLS if options["fit"] else ()
        fits = []
        # Printed after the bar: a line written while it runs would land inside it.
        with progress_bar("recompute", total=1 + len(pools)) as advance:
            report = ratings_recompute(fix=options["fix"])
            advance(1)
            for done, pool in enumerate(pools, start=2):
                started = time.perf_counter()
                fits.append((pool, ratings_fit(pool=pool), time.perf_counter() - started))
                advance(done)
        self.stdout.write(
            f"Replayed {report.matches} rated matches in {report.seconds:.2f} s: "
            f"{len(report.mismatches)} difference(s)."
        )
        for line in report.mismatches[:20]:
            self.stdout.write(f"  {line}")
        for pool, fit, seconds in fits:
            if fit is not None:
                self.stdout.write(
                    f"Fitted {pool}: {fit.matches} matches, {fit.bootstraps} bootstraps, "
                    f"{seconds:.2f} s."
                )
        if report.mismatches and not options["fix"]:
            raise CommandError("stored ratings differ from the archive (run with --fix)")
