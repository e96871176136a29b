"""`python manage.py verify_match <id>`: check a finished match against its commitment."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from games.models import Match
from games.reading import match_reading
from games.verification import match_verification


class Command(BaseCommand):
    help = (
        "Verify a finished, unsealed match: the commitment published at its start is the "
        "one its revealed seed gives, and the log replayed on the decks derived from the "
        "seed gives the stored result."
    )

    def add_arguments(self, parser):
        parser.add_argument("match_id", type=int)

    def handle(self, *args, match_id: int, **options):
        try:
            match = Match.objects.get(pk=match_id)
        except Match.DoesNotExist:
            raise CommandError(f"No match {match_id}.") from None
        if match.status != Match.Status.FINISHED:
            raise CommandError(
                f"Match {match_id} is {match.status}: only a finished match reveals its seed."
            )
        if match_reading(match).sealed:
            raise CommandError(
                f"Match {match_id} is sealed: its deal group has matches still to end, and "
                "its seed stays secret until they have (docs/fairness.md)."
            )
        found = match_verification(match)
        yes = {True: "ok", False: "FAILED"}
        self.stdout.write(f"match {match_id}: {found.moves} moves, result {match.result}")
        self.stdout.write(f"kind        {found.kind}")
        if found.group_seed is not None:
            self.stdout.write(f"group seed  {found.group_seed}")
            self.stdout.write(f"group       sha256 {found.group_commitment}")
            self.stdout.write(f"deck, copy  {found.deal_number}, {found.deal_copy}")
        self.stdout.write(f"seed        {found.seed or '(explicit decks)'}")
        self.stdout.write(f"commitment  {found.commitment}  {yes[found.commitment_ok]}")
        for number, deck in enumerate(found.decks):
            self.stdout.write(f"deck {number:<6} {' '.join(deck)}")
        self.stdout.write(f"replay      {yes[found.replay_ok]}")
        self.stdout.write(f"result      {yes[found.result_ok]}")
        if not found.ok:
            raise CommandError("; ".join(found.problems))
        self.stdout.write(self.style.SUCCESS(f"match {match_id} verified"))
