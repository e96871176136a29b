"""`python manage.py bot_secrets_rotate`: re-encrypt every bot secret with the newest key."""

from django.core.management.base import BaseCommand

from bots.services import bot_secrets_reencrypt


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored bot secret with the first key of BOT_SECRET_KEYS "
        "(docs/credentials.md); then the older keys can be dropped."
    )

    def handle(self, *args, **options):
        count = bot_secrets_reencrypt()
        self.stdout.write(f"{count} bot secret(s) re-encrypted with the first key.")
