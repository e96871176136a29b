"""Bot secrets at rest: encrypted with a key from the environment, read back to sign."""

from __future__ import annotations

import importlib
import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from bots import services
from bots.models import Bot
from cardserver.crypto import UndecryptableValue

pytestmark = pytest.mark.django_db

OLD_KEY = Fernet.generate_key().decode()
NEW_KEY = Fernet.generate_key().decode()


def stored_secret(bot_id: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM bots_bot WHERE id = %s", [bot_id])
        return cursor.fetchone()[0]


def test_a_secret_is_unreadable_in_the_database_and_read_back_in_clear(http_bot_of):
    bot, secret, _server = http_bot_of()

    assert secret not in stored_secret(bot.pk)
    assert Bot.objects.get(pk=bot.pk).secret == secret


def test_an_encrypted_secret_still_signs_the_arenas_requests(user, kit_http_bot, settings):
    settings.BOTS_ALLOW_PRIVATE_URLS = True
    url, server = kit_http_bot("the-bots-own-secret")
    bot = Bot.objects.create(
        name="signer", owner=user, kind=Bot.Kind.HTTP, url=url, secret="the-bots-own-secret",
        games=["durak"],
    )  # fmt: skip

    answer = services.bot_ping(bot_id=bot.pk)
    server.secret = "another-secret"
    refused = services.bot_ping(bot_id=bot.pk)

    assert answer.ok, answer.detail
    assert not refused.ok


def test_a_rotated_bot_secret_is_stored_encrypted_too(http_bot_of):
    bot, _secret, _server = http_bot_of()

    new = services.bot_credentials_rotate(bot_id=bot.pk)

    assert new not in stored_secret(bot.pk)
    assert Bot.objects.get(pk=bot.pk).secret == new


def test_key_rotation_reencrypts_every_secret_so_the_old_key_can_go(user, settings):
    settings.BOT_SECRET_KEYS = [OLD_KEY]
    bot = Bot.objects.create(
        name="rotated", owner=user, kind=Bot.Kind.HTTP, url="http://127.0.0.1:1/",
        secret="kept-across-keys", games=["durak"],
    )  # fmt: skip
    under_old = stored_secret(bot.pk)

    settings.BOT_SECRET_KEYS = [NEW_KEY, OLD_KEY]
    assert Bot.objects.get(pk=bot.pk).secret == "kept-across-keys"
    out = io.StringIO()
    call_command("bot_secrets_rotate", stdout=out)
    settings.BOT_SECRET_KEYS = [NEW_KEY]

    assert out.getvalue().startswith("1 bot secret(s) re-encrypted")
    assert stored_secret(bot.pk) != under_old
    assert Bot.objects.get(pk=bot.pk).secret == "kept-across-keys"


def test_a_secret_under_no_configured_key_is_a_clear_error(user, settings):
    settings.BOT_SECRET_KEYS = [OLD_KEY]
    bot = Bot.objects.create(
        name="lost", owner=user, kind=Bot.Kind.HTTP, url="http://127.0.0.1:1/",
        secret="under-the-old-key", games=["durak"],
    )  # fmt: skip
    settings.BOT_SECRET_KEYS = [NEW_KEY]

    with pytest.raises(UndecryptableValue, match="keep the old key"):
        Bot.objects.get(pk=bot.pk)


def test_the_migration_encrypts_secrets_stored_in_clear(user):
    bot = Bot.objects.create(
        name="legacy", owner=user, kind=Bot.Kind.HTTP, url="http://127.0.0.1:1/",
        secret="placeholder", games=["durak"],
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("UPDATE bots_bot SET secret = %s WHERE id = %s", ["in-clear", bot.pk])
    migration = importlib.import_module("bots.migrations.0010_bot_secret_encrypted")

    migration.secrets_encrypt(None, _Editor())
    migration.secrets_encrypt(None, _Editor())  # a second run changes nothing

    assert "in-clear" not in stored_secret(bot.pk)
    assert Bot.objects.get(pk=bot.pk).secret == "in-clear"


class _Editor:
    """What the migrations' functions use of a schema editor."""

    connection = connection

    def execute(self, sql: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)
