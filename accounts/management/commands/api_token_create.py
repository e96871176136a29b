"""`python manage.py api_token_create USERNAME [--name NAME]`: make an API token, shown once.

It replaces DRF's ``drf_create_token`` (tokens are now stored hashed, ``accounts.tokens``)
and prints the same line, so ``awk '{print $3}'`` still picks the token out.
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.tokens import token_create


class Command(BaseCommand):
    help = "Make a named API token for a user and print it (shown this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="Made on the command line")

    def handle(self, *args, username: str, name: str, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}: create one first.")
        try:
            _token, key = token_create(user=user, name=name)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(f"Generated token {key} for user {username}")
