"""`python manage.py play_in_terminal durak --players 2`: a deal against random players."""

from __future__ import annotations

import argparse
import sys

from django.core.management.base import BaseCommand, CommandError

from games.terminal_play import play_in_terminal


class Command(BaseCommand):
    help = "Play a deal of Durak or Volynshchik in the terminal against built-in random players."

    def add_arguments(self, parser):
        parser.add_argument("game", choices=["durak", "volynshchik"])
        parser.add_argument("--players", type=int, default=2)
        parser.add_argument("--deck-size", type=int, choices=[32, 36], default=None)
        parser.add_argument("--seat", type=int, default=0, help="your seat (0 moves first)")
        parser.add_argument("--seed", type=int, default=None, help="replay a given deal")
        # Lets call_command() feed the moves from a file object (the tests do).
        parser.add_argument("--stdin", default=None, help=argparse.SUPPRESS)

    def handle(self, *args, **options):
        stdin = options.get("stdin")

        def read(prompt: str) -> str:
            self.stdout.write(prompt, ending="")
            self.stdout.flush()
            line = (stdin or sys.stdin).readline()
            if not line:
                raise EOFError
            return line

        try:
            play_in_terminal(
                options["game"],
                players=options["players"],
                deck_size=options["deck_size"],
                seat=options["seat"],
                seed=options["seed"],
                read=read,
                write=self.stdout.write,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
