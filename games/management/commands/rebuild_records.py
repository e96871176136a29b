"""`python manage.py rebuild_records`: recount the kept head-to-head and version records."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from games.records import records_differences, records_rebuild


class Command(BaseCommand):
    help = (
        "Recount the records kept as matches finish (head-to-head, per version, forfeits) "
        "from the archive of finished matches and replace them. With --check, only compare "
        "and fail if they differ."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Compare only; exit 1 if they differ."
        )

    def handle(self, *args, check: bool = False, **options):
        if check:
            differences = records_differences()
            for line in differences[:50]:
                self.stdout.write(line)
            if differences:
                raise CommandError(f"{len(differences)} kept records differ from the archive.")
            self.stdout.write("The kept records equal a count over the archive.")
            return
        pairs, versions = records_rebuild()
        self.stdout.write(f"Rebuilt {pairs} head-to-head rows and {versions} version rows.")
