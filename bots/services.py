"""Actions on bots: registration, credentials and health.

The bot-turn driver, which plays the server-side bots' moves, is ``bots.driver``.

Each action is a function named ``<entity>_<action>`` with keyword-only, typed arguments.
An action that calls a bot over HTTP never holds a database transaction open while it
waits: it checks and calls first, then writes in one short transaction.

Who may act is the caller's business (the API lets a bot's owner alone change it; the
admin lets staff); these functions do not check it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from accounts.tokens import token_create, tokens_revoke_all
from bots import notices, versions
from bots.models import Bot, BotVersion, ChallengePolicy, bot_name_validator
from cardkit.caller import BotCaller
from cardkit.engine import GAME_CLASSES
from cardkit.protocol import BotAnswer
from cardkit.urlsafety import UnsafeBotURL, resolve_safe

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# The owner of the built-in bots. A colon is not allowed in the user names people choose
# (Django's username validator), so neither this name nor a client bot's account name
# (``bot:<name>``) can be taken by a person first.
SYSTEM_USERNAME = "arena:builtin"
CLIENT_ACCOUNT_PREFIX = "bot:"
BUILTIN_PLAYERS = ("random", "greedy", "strong")
REGISTRABLE_KINDS = (Bot.Kind.HTTP, Bot.Kind.CLIENT)
# The name of a client bot's API token, made at registration and on rotation.
CLIENT_TOKEN_NAME = "Bot credential"
# Seconds a bot URL's host may take to resolve when it is registered or changed.
RESOLVE_TIMEOUT = 5.0


# -- registration ---------------------------------------------------------------------


SECRET_PREFIX = "cbs_"


def _secret_new() -> str:
    """Return a new HTTP bot's secret. Its prefix keeps it from starting with "-" (one
    in 64 of bare URL-safe tokens did), which a command line would read as an option:
    ``cardkit serve bot.py --secret -x...`` failed, and the arena's own load test lost a
    bot that way."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def bot_register(
    *,
    owner: User,
    name: str,
    kind: str,
    games: Iterable[str],
    url: str = "",
    description: str = "",
) -> tuple[Bot, str]:
    """Register a bot of ``owner`` and return it with its credential, shown this once.

    An ``http`` bot gets a signing secret; its URL is checked (``BOTS_ALLOW_PRIVATE_URLS``)
    and pinged, and the ping's outcome is recorded in ``last_ping_*``: a bot whose ping
    fails is still registered. A ``client`` bot gets a user account of its own
    (``bot:<name>``, no password) and returns that account's API token.

    Raise ValidationError (with a dict of field errors) for a name that is taken or
    malformed, an unknown game or kind, or a URL that is missing, refused or unresolvable.
    """
    kind = _clean_kind(kind)
    errors: dict[str, list[str]] = {}
    name = _collect(errors, "name", _clean_name, name)
    games = _collect(errors, "games", _clean_games, games)
    if kind == Bot.Kind.HTTP:
        url = _collect(errors, "url", _clean_url, url)
    elif url:
        errors["url"] = ["Only HTTP bots have a URL; a client bot calls the arena."]
    if errors:
        raise ValidationError(errors)

    if kind == Bot.Kind.HTTP:
        secret = _secret_new()
        answer = bot_caller().ping(url, secret, settings.BOTS_DEFAULT_MOVE_TIME_LIMIT)
        failed = not answer.ok
        bot = _bot_create(
            owner=owner,
            name=name,
            kind=kind,
            games=games,
            description=description,
            url=url,
            secret=secret,
            last_ping_at=timezone.now(),
            last_ping_ok=answer.ok,
            last_ping_detail=_ping_detail(answer),
            consecutive_failures=int(failed),
            healthy=not (failed and settings.BOTS_UNHEALTHY_AFTER <= 1),
            first_version=answer.version if answer.ok else "",
        )
        return bot, secret

    with transaction.atomic():
        account = _client_account_create(name)
        bot = _bot_create(
            owner=owner,
            name=name,
            kind=kind,
            games=games,
            description=description,
            account=account,
        )
        _token, key = token_create(user=account, name=CLIENT_TOKEN_NAME)
    return bot, key


def _bot_create(*, first_version: str = "", **fields) -> Bot:
    try:
        with transaction.atomic():
            bot = Bot.objects.create(**fields)
            versions.bot_version_first(bot=bot, label=first_version)
            return bot
    except IntegrityError:
        # Two registrations of one name at once: the unique index decided.
        raise ValidationError({"name": [_NAME_TAKEN]}) from None


def _client_account_create(name: str):
    User = get_user_model()
    username = CLIENT_ACCOUNT_PREFIX + name
    try:
        with transaction.atomic():
            account = User(username=username)
            account.set_unusable_password()
            account.save()
    except IntegrityError:
        raise ValidationError({"name": [_NAME_TAKEN]}) from None
    return account


def bot_credentials_rotate(*, bot_id: int) -> str:
    """Replace the bot's credential and return the new one, shown this once.

    An HTTP bot gets a new signing secret (requests are signed with it from now on); a
    client bot's API token is replaced, so the old token stops working at once. Raise
    ValidationError for a built-in bot, which has none.
    """
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot_id)
        if bot.kind == Bot.Kind.HTTP:
            bot.secret = _secret_new()
            bot.save(update_fields=["secret"])
            return bot.secret
        if bot.kind == Bot.Kind.CLIENT:
            tokens_revoke_all(user_id=bot.account_id)
            _token, key = token_create(user=bot.account, name=CLIENT_TOKEN_NAME)
            return key
    raise ValidationError("A built-in bot has no credentials.")


def bot_secrets_reencrypt() -> int:
    """Re-encrypt every stored bot secret with the first key of ``BOT_SECRET_KEYS``;
    return how many. Raise UndecryptableValue, having changed nothing, if a secret is
    under none of the keys. Each row is read and written in clear through the model's
    field, which encrypts with the first key."""
    with transaction.atomic():
        bots = list(Bot.objects.exclude(secret="").select_for_update().only("id", "secret"))
        for bot in bots:
            Bot.objects.filter(pk=bot.pk).update(secret=bot.secret)
    return len(bots)


def bot_update(
    *,
    bot_id: int,
    description: str | None = None,
    url: str | None = None,
    games: Iterable[str] | None = None,
    version: str | None = None,
    challenge_policy: str | None = None,
) -> Bot:
    """Change what is given of the bot's description, URL, games and challenge policy;
    return the bot.

    A new URL (HTTP bots only) is checked like at registration and pinged, and the ping
    is recorded; it starts a new version of the bot (the one the ping answer reports, or
    the next number). ``version`` starts a version with that label. Raise
    ValidationError for an unknown game, or a URL that is refused or given for a bot
    that is not an HTTP bot, or a version label that is invalid or used before.
    """
    bot = Bot.objects.get(pk=bot_id)
    errors: dict[str, list[str]] = {}
    changes: dict[str, object] = {}
    if description is not None:
        changes["description"] = description
    if challenge_policy is not None:
        if challenge_policy not in ChallengePolicy.values:
            errors["challenge_policy"] = [
                f"A policy is one of: {', '.join(ChallengePolicy.values)}."
            ]
        changes["challenge_policy"] = challenge_policy
    if games is not None:
        changes["games"] = _collect(errors, "games", _clean_games, games)
    if url is not None and url != bot.url:
        if bot.kind != Bot.Kind.HTTP:
            errors["url"] = ["Only HTTP bots have a URL."]
        else:
            changes["url"] = _collect(errors, "url", _clean_url, url)
    if errors:
        raise ValidationError(errors)

    answer = None
    if "url" in changes:
        answer = bot_caller().ping(
            changes["url"], bot.secret, settings.BOTS_DEFAULT_MOVE_TIME_LIMIT
        )
    with transaction.atomic():
        if changes:
            Bot.objects.filter(pk=bot_id).update(**changes)
        if answer is not None:
            bot_health_record(bot_id=bot_id, ok=answer.ok, ping=answer)
        if version is not None:
            versions.bot_version_start(bot_id=bot_id, reason=BotVersion.Reason.OWNER, label=version)
        elif "url" in changes:
            reported = answer.version if answer.ok else ""
            if not reported or versions.bot_version_reported(bot_id=bot_id, label=reported) is None:
                versions.bot_version_start(bot_id=bot_id, reason=BotVersion.Reason.URL)
    return Bot.objects.get(pk=bot_id)


def bot_set_enabled(*, bot_id: int, enabled: bool) -> Bot:
    """Enable or disable the bot and return it. A disabled bot is offered no new matches;
    matches it already plays go on."""
    with transaction.atomic():
        Bot.objects.filter(pk=bot_id).update(enabled=enabled)
    return Bot.objects.get(pk=bot_id)


def builtin_bots_ensure() -> list[Bot]:
    """Create the built-in bots `random`, `greedy` and `strong` where missing; return all
    three. Idempotent: existing bots are left as they are."""
    User = get_user_model()
    with transaction.atomic():
        owner = User.objects.filter(username=SYSTEM_USERNAME).first()
        if owner is None:
            owner = User(username=SYSTEM_USERNAME)
            owner.set_unusable_password()
            owner.save()
        bots = []
        for player in BUILTIN_PLAYERS:
            bot, _ = Bot.objects.get_or_create(
                name=player,
                defaults={
                    "owner": owner,
                    "kind": Bot.Kind.BUILTIN,
                    "builtin": player,
                    "games": list(GAME_CLASSES),
                    "description": f"The built-in {player} player.",
                },
            )
            versions.bot_version_first(bot=bot)
            bots.append(bot)
    return bots


# -- health -----------------------------------------------------------------------------


def bot_ping(*, bot_id: int) -> BotAnswer:
    """Ping an HTTP bot, record the outcome, and return the bot's answer.

    A good answer makes the bot healthy and clears its failures; a bad one counts a
    failure, and ``BOTS_UNHEALTHY_AFTER`` failures in a row mark it unhealthy. Raise
    ValidationError for a bot that is not an HTTP bot.
    """
    bot = Bot.objects.get(pk=bot_id)
    if bot.kind != Bot.Kind.HTTP:
        raise ValidationError("Only HTTP bots are pinged; the arena does not call other bots.")
    answer = bot_caller().ping(bot.url, bot.secret, settings.BOTS_DEFAULT_MOVE_TIME_LIMIT)
    with transaction.atomic():
        bot_health_record(bot_id=bot_id, ok=answer.ok, ping=answer)
        if answer.ok and answer.version:
            versions.bot_version_reported(bot_id=bot_id, label=answer.version)
    return answer


def bot_health_record(
    *, bot_id: int, ok: bool, ping: BotAnswer | None = None, reason: str = ""
) -> None:
    """Count a good or a failed answer of the bot; with ``ping``, record it as the last ping.

    The count is updated in the database, so that answers recorded at the same time by
    several workers all count. The failure that makes the bot unhealthy records why
    (``reason``, or the ping's fault) and since when, and its owner is mailed after the
    commit (``bots.notices``); a good answer clears both.
    """
    now = timezone.now()
    if ok:
        changes = {
            "consecutive_failures": 0, "healthy": True, "unhealthy_since": None,
            "unhealthy_reason": "",
        }  # fmt: skip
    else:
        changes = {
            "consecutive_failures": F("consecutive_failures") + 1,
            # The right-hand side reads the row as it was before this update.
            "healthy": Case(
                When(
                    consecutive_failures__gte=settings.BOTS_UNHEALTHY_AFTER - 1,
                    then=Value(False),
                ),
                default=F("healthy"),
            ),
        }
    if ping is not None:
        changes.update(last_ping_at=now, last_ping_ok=ping.ok, last_ping_detail=_ping_detail(ping))
    Bot.objects.filter(pk=bot_id).update(**changes)
    if not ok:
        # Only the update that finds the pause unrecorded records it (the row's lock orders
        # two failures at once), so the owner is mailed once a pause.
        why = (
            f"{settings.BOTS_UNHEALTHY_AFTER} failures in a row, the last: "
            f"{reason or (_ping_detail(ping) if ping is not None else 'a failed call')}"
        )[:300]
        if Bot.objects.filter(pk=bot_id, healthy=False, unhealthy_since=None).update(
            unhealthy_since=now, unhealthy_reason=why
        ):
            notices.bot_pause_notify(bot_id=bot_id, reason=why)


def _ping_detail(answer: BotAnswer) -> str:
    if answer.ok:
        return f"pong in {answer.elapsed * 1000:.0f} ms"
    return f"{answer.fault}: {answer.detail}"[:300]


# -- checks -----------------------------------------------------------------------------

_NAME_TAKEN = "A bot with this name already exists."


def _collect(errors: dict[str, list[str]], field: str, clean, value):
    """Return ``clean(value)``, or store its ValidationError's messages under ``field``."""
    try:
        return clean(value)
    except ValidationError as exc:
        errors[field] = exc.messages
        return value


def _clean_kind(kind: str) -> str:
    if kind not in REGISTRABLE_KINDS:
        raise ValidationError(
            {"kind": [f"A bot is registered as one of: {', '.join(REGISTRABLE_KINDS)}."]}
        )
    return kind


def _clean_name(name: str) -> str:
    if not isinstance(name, str):
        raise ValidationError("A bot name is a string.")
    bot_name_validator(name)
    if Bot.objects.filter(name__iexact=name).exists():
        raise ValidationError(_NAME_TAKEN)
    return name


def _clean_games(games: Iterable[str]) -> list[str]:
    if isinstance(games, str) or not isinstance(games, Iterable):
        raise ValidationError("Give a list of games.")
    games = list(dict.fromkeys(games))
    if not games:
        raise ValidationError(f"Give at least one game: {', '.join(GAME_CLASSES)}.")
    unknown = [game for game in games if game not in GAME_CLASSES]
    if unknown:
        raise ValidationError(
            f"Unknown game(s): {', '.join(map(str, unknown))}; the games are "
            f"{', '.join(GAME_CLASSES)}."
        )
    return games


def _clean_url(url: str) -> str:
    if not url:
        raise ValidationError("An HTTP bot needs the URL the arena calls.")
    if len(url) > Bot._meta.get_field("url").max_length:
        raise ValidationError("The URL is too long.")
    try:
        resolve_safe(url, settings.BOTS_ALLOW_PRIVATE_URLS, timeout=RESOLVE_TIMEOUT)
    except UnsafeBotURL as exc:
        raise ValidationError(exc.reason) from None
    except (OSError, TimeoutError) as exc:
        raise ValidationError(f"The URL's host does not resolve: {exc}") from None
    return url


# -- the bot caller ---------------------------------------------------------------------

# One caller per process and per value of the setting, so that connections to bots are
# kept alive between moves. Built on first use: settings are not read at import time.
_CALLERS: dict[bool, BotCaller] = {}


def bot_caller() -> BotCaller:
    """Return this process's caller for the current ``BOTS_ALLOW_PRIVATE_URLS``."""
    allow_private = bool(settings.BOTS_ALLOW_PRIVATE_URLS)
    caller = _CALLERS.get(allow_private)
    if caller is None:
        caller = _CALLERS.setdefault(allow_private, BotCaller(allow_private=allow_private))
    return caller
