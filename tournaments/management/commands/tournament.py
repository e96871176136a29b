"""Run a tournament of existing bots and print its standings and ratings.

    python manage.py tournament --game durak --players 2 --bots random,greedy,strong \\
        --games 200 --duplicate

The matches go to the Celery workers when one answers a ping, and are played in this
process otherwise (or with ``--inline``). A progress bar on standard error follows the
matches done, with the log lines printed above it (``cardserver.progress``); Ctrl-C
cancels the tournament. The ratings printed are a batch fit of this tournament's
results alone, with 95% intervals; ``--rated`` also feeds the pools' ratings.
"""

from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError

from bots.models import Bot
from cardkit.stats.bradley_terry import fit_ratings
from cardserver.progress import Advance, progress_bar
from tournaments.creation import TournamentError, tournament_create
from tournaments.models import Tournament, TournamentMatch
from tournaments.selectors import tournament_standings
from tournaments.services import tournament_cancel, tournament_play_inline, tournament_start


class Command(BaseCommand):
    help = "Run a tournament of existing bots (through Celery, or in this process)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--game", choices=["durak", "volynshchik"], default="durak")
        parser.add_argument("--players", type=int, default=2, help="Players at each table.")
        parser.add_argument("--bots", required=True, help="Comma-separated bot names.")
        parser.add_argument(
            "--games", type=int, default=2, help="Games per pairing (a multiple of --players)."
        )
        parser.add_argument("--duplicate", action="store_true", help="Duplicate deals.")
        parser.add_argument("--double", action="store_true", help="Double round-robin.")
        parser.add_argument(
            "--gauntlet",
            action="store_true",
            help="Gauntlet: the first bot of --bots plays each other one.",
        )
        parser.add_argument("--series", action="store_true", help="Play series to ДУРАК.")
        parser.add_argument("--deck-size", type=int, choices=[32, 36])
        parser.add_argument("--time-limit", type=float, default=5.0, help="Seconds per move.")
        parser.add_argument("--rated", action="store_true", help="Feed the pools' ratings.")
        parser.add_argument("--name", default="", help="Tournament name.")
        parser.add_argument(
            "--inline", action="store_true", help="Play in this process even if a worker runs."
        )
        parser.add_argument("--seed", help="Seed of the duplicate decks.")

    def handle(self, *args, **options) -> None:
        names = [name.strip() for name in options["bots"].split(",") if name.strip()]
        found = {bot.name.lower(): bot for bot in Bot.objects.filter(name__in=names)}
        missing = [name for name in names if name.lower() not in found]
        if missing:
            raise CommandError(f"no such bot: {', '.join(missing)}")
        try:
            tournament = tournament_create(
                creator=None,
                name=options["name"]
                or f"{options['game']} {options['players']}p: " + ", ".join(names),
                game=options["game"],
                players=options["players"],
                bots=[found[name.lower()] for name in names],
                deck_size=options["deck_size"],
                match_format="fool" if options["series"] else "deal",
                format=_format(options),
                games_per_pairing=options["games"],
                move_time_limit=options["time_limit"],
                rated=options["rated"],
                duplicate=options["duplicate"],
                seed=options["seed"],
            )
        except TournamentError as exc:
            raise CommandError(str(exc)) from None

        inline = options["inline"] or not worker_running()
        self.stdout.write(
            f"Tournament #{tournament.pk}: {tournament.matches_total} matches in "
            f"{tournament.rounds_total} rounds, "
            + ("in this process" if inline else "on the Celery workers")
        )
        started = time.perf_counter()
        try:
            with progress_bar("matches", total=tournament.matches_total) as advance:
                if inline:
                    self.play_inline(tournament, advance)
                else:
                    self.follow(tournament, advance)
        except KeyboardInterrupt:
            tournament_cancel(tournament_id=tournament.pk)
            self.stdout.write("Cancelled.")
        elapsed = time.perf_counter() - started
        tournament.refresh_from_db()
        self.stdout.write(
            f"{tournament.get_status_display()}: {tournament.matches_done} matches in "
            f"{elapsed:.1f} s ({60 * tournament.matches_done / max(elapsed, 1e-9):.0f} per minute)"
        )
        self.print_results(tournament)

    def play_inline(self, tournament: Tournament, advance: Advance) -> None:
        from cardserver.celery import eager_tasks

        # Tasks the matches send (turn notices, deadline checks) run here, not in a broker
        # queue that no worker reads.
        with eager_tasks():
            tournament_play_inline(tournament_id=tournament.pk, progress=advance)

    def follow(self, tournament: Tournament, advance: Advance) -> None:
        tournament_start(tournament_id=tournament.pk)
        while True:
            tournament.refresh_from_db()
            advance(tournament.matches_done, tournament.matches_total)
            if tournament.status not in (Tournament.Status.RUNNING, Tournament.Status.DRAFT):
                return
            time.sleep(0.5)

    def print_results(self, tournament: Tournament) -> None:
        standings = tournament_standings(tournament)
        width = max([len(line.name) for line in standings.lines] + [3])
        self.stdout.write("\nStandings")
        self.stdout.write(
            f"  {'#':>2}  {'bot':<{width}}  {'games':>6}  {'points':>8}  {'losses':>6}  "
            f"{'draws':>5}  {'loss rate':>9}"
        )
        for rank, line in enumerate(standings.lines, start=1):
            rate = line.losses / line.games if line.games else 0.0
            self.stdout.write(
                f"  {rank:>2}  {line.name:<{width}}  {line.games:>6}  {line.points:>8.1f}  "
                f"{line.losses:>6}  {line.draws:>5}  {rate:>9.3f}"
            )
        finished = TournamentMatch.objects.filter(
            tournament=tournament, status=TournamentMatch.Status.FINISHED
        ).values_list("table", "match__loser")
        tables, losers = [], []
        for table, loser in finished:
            tables.append(table)
            losers.append(loser)
        if not tables:
            return
        from django.conf import settings

        anchor = Bot.objects.filter(name=settings.RATING_ANCHOR_BOT).first()
        entries = fit_ratings(
            tables,
            losers,
            anchor=anchor.pk if anchor else None,
            anchor_rating=settings.RATING_ANCHOR,
            bootstraps=settings.RATING_BOOTSTRAPS,
        )
        names = dict(
            Bot.objects.filter(pk__in=[e.player for e in entries]).values_list("pk", "name")
        )
        anchored = anchor is not None and any(e.player == anchor.pk for e in entries)
        self.stdout.write(
            "\nRatings (Bradley-Terry fit of this tournament, "
            + (
                f"{anchor.name} = {settings.RATING_ANCHOR:g}"
                if anchored
                else f"mean = {settings.RATING_ANCHOR:g}"
            )
            + ", 95% bootstrap interval, LOS over the next bot)"
        )
        for rank, entry in enumerate(entries, start=1):
            los = f"{entry.los:.3f}" if entry.los is not None else ""
            self.stdout.write(
                f"  {rank:>2}  {names[entry.player]:<{width}}  {entry.rating:>7.0f}  "
                f"[{entry.low:>5.0f}, {entry.high:>5.0f}]  {los}"
            )


def worker_running() -> bool:
    """Return whether a Celery worker answers a ping within a second."""
    from cardserver import celery_app

    try:
        return bool(celery_app.control.ping(timeout=1.0))
    except Exception:  # noqa: BLE001 - no broker, no worker
        print("(no broker answered; playing in this process)", file=sys.stderr)
        return False


def _format(options: dict) -> str:
    if options["double"] and options["gauntlet"]:
        raise CommandError("--double and --gauntlet are two formats: choose one")
    if options["gauntlet"]:
        return Tournament.Format.GAUNTLET
    if options["double"]:
        return Tournament.Format.DOUBLE_ROUND_ROBIN
    return Tournament.Format.ROUND_ROBIN
