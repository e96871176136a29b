"""Reads of the bot registry that other apps share."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet

from bots.models import Bot, BotTurnLease


def bot_by_name_or_id(name_or_id: str) -> Bot | None:
    """Return the bot with this name, or with this id when ``name_or_id`` is all digits."""
    condition = Q(name=name_or_id)
    if name_or_id.isdigit():
        condition |= Q(pk=int(name_or_id))
    return Bot.objects.filter(condition).first()


def matches_claimed(*, now: datetime) -> QuerySet:
    """Return the ids of the matches a bot driver holds a live claim on at ``now`` (a
    subquery): a match in play whose claim lapsed has no driver left."""
    return BotTurnLease.objects.filter(expires_at__gt=now).values("match_id")
