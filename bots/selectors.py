"""Reads of the bot registry that other apps share."""

from __future__ import annotations

from django.db.models import Q

from bots.models import Bot


def bot_by_name_or_id(name_or_id: str) -> Bot | None:
    """Return the bot with this name, or with this id when ``name_or_id`` is all digits."""
    condition = Q(name=name_or_id)
    if name_or_id.isdigit():
        condition |= Q(pk=int(name_or_id))
    return Bot.objects.filter(condition).first()
