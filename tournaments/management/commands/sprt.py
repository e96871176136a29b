"""Run a sequential test of a candidate bot against a baseline, with a progress bar.

    python manage.py sprt CANDIDATE BASELINE [--game durak] [--players 2]
        [--mode head_to_head|reference] [--reference greedy] [--elo0 0] [--elo1 20]
        [--alpha 0.05] [--beta 0.05] [--model normalized|logistic] [--max-games 4000]
        [--user NAME] [--workers]

CANDIDATE and BASELINE are ``bot`` or ``bot@label``. Without ``--workers`` the pairs are
played in this process, one after another, and no task is sent; with it they go to the
Celery workers as the API's tests do and this command follows the test until it ends.
Either way the bar shows the games played against the cap and the running LLR against
its bounds; Ctrl-C cancels the test. The command line is trusted: no permission check
and no daily quota (the test is recorded as ``--user``'s, by default the arena's system
user).
"""

from __future__ import annotations

import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bots.services import SYSTEM_USERNAME
from tournaments import sequential, sequential_pairs
from tournaments.dispatch import inline_play
from tournaments.models import SequentialPair, SequentialTest


class Command(BaseCommand):
    help = "Run a sequential test (GSPRT on paired deals) of CANDIDATE against BASELINE."

    def add_arguments(self, parser) -> None:
        parser.add_argument("candidate")
        parser.add_argument("baseline")
        parser.add_argument("--game", default="durak")
        parser.add_argument("--players", type=int, default=2)
        parser.add_argument("--mode", default="head_to_head", choices=SequentialTest.Mode.values)
        parser.add_argument("--reference", default="greedy")
        parser.add_argument("--elo0", type=float)
        parser.add_argument("--elo1", type=float)
        parser.add_argument("--alpha", type=float)
        parser.add_argument("--beta", type=float)
        parser.add_argument("--model", default="normalized", choices=["normalized", "logistic"])
        parser.add_argument("--max-games", type=int)
        parser.add_argument("--user", default=SYSTEM_USERNAME)
        parser.add_argument("--workers", action="store_true", help="Play on the workers.")

    def handle(self, *args, **options) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user {options['user']!r} (run ensure_builtin_bots?)")
        given = {
            key: options[key] for key in (
                "candidate", "baseline", "game", "players", "mode", "reference", "elo0",
                "elo1", "alpha", "beta", "model", "max_games",
            )
        }  # fmt: skip
        try:
            if options["workers"]:
                test = sequential.sequential_test_create(user=user, trusted=True, **given)
            else:
                with inline_play():
                    test = sequential.sequential_test_create(user=user, trusted=True, **given)
        except sequential.SequentialTestError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"test {test.pk}: /tests/{test.pk}/")
        try:
            self._follow(test.pk, inline=not options["workers"])
        except KeyboardInterrupt:
            sequential.sequential_test_cancel(test_id=test.pk)
            self.stdout.write("cancelled")
        test.refresh_from_db()
        summary = sequential.sequential_test_summary(test)
        self.stdout.write(
            f"{test.get_status_display()}: {summary['pairs']} pairs, counts {test.counts}, "
            f"LLR {test.llr:.2f} [{summary['llr_lower']:.2f}, {summary['llr_upper']:.2f}], "
            f"Elo {_number(summary['elo'])} ({_number(summary['elo_low'])} to "
            f"{_number(summary['elo_high'])}), LOS {summary['los']:.1%}"
        )

    def _follow(self, test_id: int, *, inline: bool) -> None:
        columns = (
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("games  LLR {task.fields[llr]:+.2f} in [{task.fields[low]:.2f}, "
                       "{task.fields[high]:.2f}]"),
            TimeElapsedColumn(),
        )  # fmt: skip
        test = SequentialTest.objects.get(pk=test_id)
        summary = sequential.sequential_test_summary(test)
        with Progress(*columns, console=None) as progress:
            bar = progress.add_task(
                f"test {test_id}", total=test.max_games, llr=0.0,
                low=summary["llr_lower"], high=summary["llr_upper"],
            )  # fmt: skip
            while test.status == SequentialTest.Status.RUNNING:
                if inline:
                    pending = (
                        SequentialPair.objects.filter(
                            test_id=test_id, status=SequentialPair.Status.PENDING
                        ).order_by("index").values_list("pk", flat=True).first()
                    )  # fmt: skip
                    if pending is None:
                        break
                    with inline_play():
                        sequential_pairs.sequential_pair_play(pair_id=pending)
                else:
                    time.sleep(1.0)
                test.refresh_from_db()
                progress.update(bar, completed=2 * test.pairs_done, llr=test.llr)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
