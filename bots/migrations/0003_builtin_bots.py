"""Register the built-in bots `random`, `greedy` and `strong`, owned by a system account.

Running this at migrate time reserves the three names before any user can register them.
``bots.services.builtin_bots_ensure`` (and ``manage.py ensure_builtin_bots``) does the
same on a live database, for example after a test flushed it.
"""

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import migrations

SYSTEM_USERNAME = "arena:builtin"
PLAYERS = ("random", "greedy", "strong")
GAMES = ["durak", "volynshchik"]


def create_builtin_bots(apps, schema_editor):
    User = apps.get_model(settings.AUTH_USER_MODEL)
    Bot = apps.get_model("bots", "Bot")
    owner, _ = User.objects.get_or_create(
        username=SYSTEM_USERNAME, defaults={"password": make_password(None)}
    )
    for player in PLAYERS:
        Bot.objects.get_or_create(
            name=player,
            defaults={
                "owner": owner,
                "kind": "builtin",
                "builtin": player,
                "games": GAMES,
                "description": f"The built-in {player} player.",
            },
        )


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0002_bot_name_unique_ignoring_case"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(create_builtin_bots, migrations.RunPython.noop)]
