"""Recompute every Elo rating from the match archive and compare with the stored ones.

    python manage.py recompute_ratings [--fix] [--fit]

Exits with status 1 when a stored rating differs from the recomputation (unless
``--fix`` rewrote it). ``--fit`` also refits every pool's leaderboard.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from tournaments.pools import POOLS
from tournaments.ratings import ratings_fit, ratings_recompute


class Command(BaseCommand):
    help = "Recompute all Elo ratings from the archive; optionally fix them and refit pools."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--fix", action="store_true", help="Rewrite ratings that differ.")
        parser.add_argument("--fit", action="store_true", help="Refit every pool too.")

    def handle(self, *args, **options) -> None:
        report = ratings_recompute(fix=options["fix"])
        self.stdout.write(
            f"Replayed {report.matches} rated matches in {report.seconds:.2f} s: "
            f"{len(report.mismatches)} difference(s)."
        )
        for line in report.mismatches[:20]:
            self.stdout.write(f"  {line}")
        if options["fit"]:
            for pool in POOLS:
                started = time.perf_counter()
                fit = ratings_fit(pool=pool)
                if fit is not None:
                    self.stdout.write(
                        f"Fitted {pool}: {fit.matches} matches, {fit.bootstraps} bootstraps, "
                        f"{time.perf_counter() - started:.2f} s."
                    )
        if report.mismatches and not options["fix"]:
            raise CommandError("stored ratings differ from the archive (run with --fix)")
