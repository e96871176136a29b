"""Fill the database with a small demo arena, to look at the pages of a fresh checkout."""

from django.core.management.base import BaseCommand

from cardserver.progress import progress_bar
from web.demo import demo_arena


class Command(BaseCommand):
    help = "Create demo bots, rated matches, a rating fit and two tournaments (idempotent bots)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matches", type=int, default=24, help="Rated Durak matches.")
        parser.add_argument("--series", action="store_true", help="Also play a series to ДУРАК.")

    def handle(self, *args, **options) -> None:
        with progress_bar("demo arena") as advance:
            demo = demo_arena(
                rated_matches=options["matches"], series=options["series"], progress=advance
            )
        self.stdout.write(
            f"{len(demo.rated)} rated matches, {len(demo.others)} other matches, "
            f"forfeit in match #{demo.forfeited.pk}, tournaments #{demo.tournament.pk} "
            f"(finished) and #{demo.running.pk} (running)."
        )
