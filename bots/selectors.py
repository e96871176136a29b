"""Reads of the bot registry that other apps share."""

from __future__ import annotations

from datetime import datetime, timedelta

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


def arena_turns_abandoned(*, now: datetime, after: float) -> list[tuple[int, int]]:
    """Return (match id, ply) of the active matches whose seat to move the arena drives,
    with no live driver claim and no move for ``after`` seconds: their driver died."""
    from games.models import Match

    cutoff = now - timedelta(seconds=after)
    stalled = (
        Match.objects.filter(status=Match.Status.ACTIVE, turn_started_at__lte=cutoff)
        .exclude(pk__in=matches_claimed(now=now))
        .only("pk", "ply", "to_move", "arena_seats")
    )
    return [(match.pk, match.ply) for match in stalled if match.arena_to_move]
