"""Bot versions: when one starts, and what ``bot@label`` names.

A bot always plays its current version (``Bot.version``); every seat it takes records
that version (``Seat.bot_version``, set by ``games.services`` from the bot it seats).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.db.models.functions import Coalesce

from bots.models import Bot, BotVersion, version_label_validator


def version_label_check(label: str) -> str:
    """Return ``label`` stripped, or raise ValidationError naming what a label may be."""
    label = (label or "").strip()
    version_label_validator(label)
    return label


def bot_version_start(
    *, bot_id: int, reason: str, label: str | None = None, url: str | None = None
) -> BotVersion:
    """Start a new version of the bot and make it current; return it.

    Without ``label`` the version is numbered (the lowest integer free above the count of
    versions). Raise ValidationError (``{"version": [...]}``) for a label that is not one
    or that the bot has used before.
    """
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot_id)
        if label is None:
            label = _next_label(bot)
        else:
            try:
                label = version_label_check(label)
            except ValidationError as exc:
                raise ValidationError({"version": exc.messages}) from None
        try:
            with transaction.atomic():
                version = BotVersion.objects.create(
                    bot=bot, label=label, reason=reason, url=bot.url if url is None else url
                )
        except IntegrityError:
            raise ValidationError(
                {"version": [f"{bot.name}@{label} exists; a new version needs a new label."]}
            ) from None
        Bot.objects.filter(pk=bot_id).update(version=version)
    return version


def bot_version_first(*, bot: Bot, label: str = "") -> BotVersion:
    """Give a bot without versions its first one, ``label`` if that is a valid label (the
    version an HTTP bot's first ping reported), else ``1``; return its current version."""
    if bot.version_id is not None:
        return bot.version
    try:
        label = version_label_check(label) if label else None
    except ValidationError:
        label = None
    version = bot_version_start(
        bot_id=bot.pk, reason=BotVersion.Reason.REGISTERED, label=label
    )
    bot.version = version
    return version


def bot_version_reported(*, bot_id: int, label: str) -> BotVersion | None:
    """Record the version string an HTTP bot's ping answer reported.

    A string the bot reported as its current version changes nothing; one it used before
    makes that version current again (the same code, back in play); a new one starts a
    version. A string that is not a valid label is ignored (None).
    """
    try:
        label = version_label_check(label)
    except ValidationError:
        return None
    with transaction.atomic():
        bot = Bot.objects.select_for_update(of=("self",)).select_related("version").get(pk=bot_id)
        if bot.version is not None and bot.version.label == label:
            return bot.version
        known = BotVersion.objects.filter(bot=bot, label=label).first()
        if known is not None:
            Bot.objects.filter(pk=bot_id).update(version=known)
            return known
        return bot_version_start(bot_id=bot_id, reason=BotVersion.Reason.PING, label=label)


def _next_label(bot: Bot) -> str:
    used = set(BotVersion.objects.filter(bot=bot).values_list("label", flat=True))
    number = len(used) + 1
    while str(number) in used:
        number += 1
    return str(number)


def bot_and_version(name: str) -> tuple[Bot, BotVersion | None]:
    """Resolve ``bot`` or ``bot@label`` (names ignore case, labels do not).

    Raise Bot.DoesNotExist or BotVersion.DoesNotExist for a name or label not known.
    """
    name, _, label = name.partition("@")
    bot = Bot.objects.select_related("owner", "version").get(name__iexact=name)
    if not label:
        return bot, None
    return bot, BotVersion.objects.get(bot=bot, label=label)


def seats_of(bot: Bot, version: BotVersion | None) -> dict[str, int]:
    """The lookups on ``Seat`` that select the seats of a bot, or of one of its versions."""
    if version is None:
        return {"bot_id": bot.pk}
    return {"bot_id": bot.pk, "bot_version_id": version.pk}


def bot_version_lines(*, bot: Bot) -> list[dict]:
    """Each version of the bot, oldest first, with the finished matches it played and
    lost (the records kept as matches finish, ``games.records``), in one query."""
    rows = (
        BotVersion.objects.filter(bot=bot)
        .annotate(
            games=Coalesce(Sum("records__games"), 0), losses=Coalesce(Sum("records__losses"), 0)
        )
        .order_by("created_at", "id")
    )
    return [
        {
            "id": version.pk,
            "label": version.label,
            "name": f"{bot.name}@{version.label}",
            "reason": version.reason,
            "current": version.pk == bot.version_id,
            "created_at": version.created_at,
            "games": version.games,
            "losses": version.losses,
            "loss_rate": version.losses / version.games if version.games else None,
        }
        for version in rows
    ]
