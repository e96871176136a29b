"""What is read of challenges (``bots.challenges`` holds the actions): the challenges a
user may see, a challenge as the API and the ``challenge`` event show it, and the account
stream's reader of challenges (``games.account_notices``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from bots.models import Bot, Challenge

if TYPE_CHECKING:
    from django.contrib.auth.models import User

NOTICE = "challenge"


def challenge_cutoff(now: datetime) -> datetime:
    """Return the creation time before which a challenge still waiting is overdue."""
    return now - timedelta(seconds=settings.CHALLENGES_EXPIRE_AFTER)


def challenges_waiting() -> QuerySet:
    """Return the challenges waiting for an answer and not yet overdue."""
    return Challenge.objects.filter(
        status=Challenge.Status.PENDING, created_at__gte=challenge_cutoff(timezone.now())
    )


def challenges_visible_to(user: User) -> QuerySet:
    """Return the challenges ``user`` made or received (for a bot they own or are)."""
    return challenges_all().filter(Q(challenger=user) | Q(bot__owner=user) | Q(bot__account=user))


def challenges_of_bot(bot: Bot, *, limit: int = 20) -> list[Challenge]:
    """Return the newest challenges ``bot`` was asked or sits in (its page shows them)."""
    return list(challenges_all().filter(bots=bot)[:limit])


def challenges_all() -> QuerySet:
    """Return every challenge, with what ``challenge_data`` reads loaded once."""
    return Challenge.objects.select_related("challenger", "bot", "answered_by").prefetch_related(
        "bots"
    )


def challenge_data(challenge: Challenge) -> dict:
    """Return the challenge as the API and the ``challenge`` event show it."""
    bots = {bot.pk: bot for bot in challenge.bots.all()}
    who = challenge.challenger.username
    return {
        "id": challenge.pk,
        "status": challenge.status,
        "challenger": who,
        "bot": challenge.bot.name,
        "game": challenge.game,
        "players": challenge.players,
        "deck_size": challenge.deck_size,
        "move_time_limit": challenge.move_time_limit,
        "seats": [_seat_data(seat, bots, who) for seat in challenge.seats],
        "reason": challenge.reason,
        "answered_by": challenge.answered_by.username if challenge.answered_by else None,
        "match": challenge.match_id,
        "created_at": challenge.created_at,
        "answered_at": challenge.answered_at,
    }


def _seat_data(seat: dict, bots: dict[int, Bot], challenger: str) -> dict:
    """Return a seat as shown: the challenger in person, or a bot's name and kind (a
    client bot's rules tell the built-in ones from the others by it)."""
    if "bot" not in seat:
        return {"user": challenger}
    bot = bots.get(seat["bot"])
    if bot is None:  # a bot deleted since: its id, kind unknown
        return {"bot": str(seat["bot"]), "kind": ""}
    return {"bot": bot.name, "kind": bot.kind}


# Challenges a stream remembers having announced; past it, it forgets them all (it may
# then say a challenge's current state once more).
_KNOWN_MAX = 1000


def challenge_notices(user, ids: list[int] | None, known: dict) -> list[tuple[str, dict]]:
    """The account stream's reader of challenges (``games.account_notices``): with None,
    every challenge waiting for ``user``'s answer; else those of ``ids`` that concern
    ``user``, each once in each state."""
    if ids is None:
        rows = (
            challenges_all()
            .filter(pk__in=challenges_waiting())
            .filter(Q(bot__owner=user) | Q(bot__account=user))
        )
    else:
        rows = challenges_visible_to(user).filter(pk__in=ids)
    if len(known) > _KNOWN_MAX:
        known.clear()
    events = []
    for challenge in rows.order_by("created_at", "id"):
        if known.get(challenge.pk) == challenge.status:
            continue
        known[challenge.pk] = challenge.status
        events.append((NOTICE, challenge_data(challenge)))
    return events
