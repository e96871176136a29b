"""`python manage.py ensure_builtin_bots`: create the built-in bots where missing."""

from django.core.management.base import BaseCommand

from bots.services import builtin_bots_ensure


class Command(BaseCommand):
    help = "Create the built-in bots random, greedy and strong where missing (idempotent)."

    def handle(self, *args, **options):
        for bot in builtin_bots_ensure():
            self.stdout.write(f"{bot.name}: built-in {bot.builtin}, owned by {bot.owner}")
