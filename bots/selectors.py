"""Reads of the bot registry that other apps share."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet

from bots.models import Bot, BotTurnLease
from cardkit.protocol import Fault


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


def arena_turns_abandoned(*, now: datetime) -> list[tuple[int, int]]:
    """Return (match id, ply) of the active matches whose seat to move the arena drives and
    whose claim lapsed at ``now``: its holder (a CPU worker playing built-in turns, or the
    I/O pool calling an HTTP bot) stopped renewing it, so it died. A match with no claim
    is waiting (in a queue, however long), never abandoned."""
    from games.models import Match

    lapsed = BotTurnLease.objects.filter(expires_at__lte=now).values("match_id")
    stalled = Match.objects.filter(status=Match.Status.ACTIVE, pk__in=lapsed).only(
        "pk", "ply", "to_move", "arena_seats"
    )
    return [(match.pk, match.ply) for match in stalled if match.arena_to_move]


def matches_lapsed(*, now: datetime) -> QuerySet:
    """Return the ids of the matches whose claim lapsed at ``now`` (a subquery)."""
    return BotTurnLease.objects.filter(expires_at__lte=now).values("match_id")


# The bots' forfeits that are faults of a call (``cardkit.protocol.Fault``): the rest of a
# match's end reasons (a person's resignation, a deal played out) are no call of the bot.
CALL_FAULTS = frozenset(fault.value for fault in Fault)


def bot_owned(*, owner_id: int, name: str) -> Bot | None:
    """Return the bot of this name when ``owner_id`` owns it, else None (the pages answer
    404 alike for a bot that is not there and one of someone else)."""
    return Bot.objects.filter(owner_id=owner_id, name__iexact=name).first()


def bot_call_log(*, bot: Bot, match_id: int) -> list[dict] | None:
    """Return what the arena saw of each of its calls to ``bot`` in the match, oldest
    first, or None when the bot holds no seat in it.

    Read from what the call path records already (no write of its own on that hot path):
    each move of the bot's seats, with when its request was queued and sent and its answer
    arrived (``games.Move``), and the fault that forfeited a seat, if one did
    (``Match.end_reason``/``forfeit_reason``). A client bot's moves are its own calls of
    the API: their latency is the turn's time. ``comment`` is the bot's comment on its
    move (its answer's ``comment``), null for none; its owner reads it at once, while
    anyone else waits for the match's end (``games.selectors.match_replay_steps``).

    Only the bot's own answers and comments are read, and only while its seat may see its
    own view (``games.reading``): once a sealed match ends, its answers and comments (cards
    of a deck that is dealt again in the group's other matches) and its fault's detail are
    withheld until the group unseals; timings and statuses stay.
    """
    from games.models import Match, Move, Seat
    from games.reading import match_reading

    seats = list(Seat.objects.filter(match_id=match_id, bot=bot).values_list("index", flat=True))
    if not seats:
        return None
    match = Match.objects.only(
        "status", "sealed", "ply", "forfeit_seat", "end_reason", "forfeit_reason", "finished_at"
    ).get(pk=match_id)
    shown = match_reading(match).seat_view(match.status, seats[0])
    lines = [
        {
            "ply": move.ply,
            "seat": move.seat,
            "queued_at": move.queued_at,
            "sent_at": move.sent_at,
            "answered_at": move.received_at,
            "latency_ms": _latency_ms(move),
            "status": "ok",
            "answer": move.move if shown else None,
            "error": None,
            "comment": (move.comment or None) if shown else None,
        }
        for move in Move.objects.filter(match_id=match_id, seat__in=seats).order_by("ply")
    ]
    if match.forfeit_seat in seats and match.end_reason in CALL_FAULTS:
        lines.append(
            {
                "ply": match.ply,
                "seat": match.forfeit_seat,
                "queued_at": None,
                "sent_at": None,
                "answered_at": match.finished_at,
                "latency_ms": None,
                "status": match.end_reason,
                "answer": None,
                "error": match.forfeit_reason if shown else "(sealed until its deal group ends)",
                "comment": None,
            }
        )
    return lines


def _latency_ms(move) -> float:
    if move.sent_at is not None:
        return round((move.received_at - move.sent_at).total_seconds() * 1000, 1)
    return round(move.time_taken * 1000, 1)


def bot_matches_of(*, bot: Bot, limit: int = 50) -> list[int]:
    """Return the ids of the bot's newest matches (for its owner's call logs)."""
    from games.models import Seat

    return list(
        Seat.objects.filter(bot=bot)
        .order_by("-match_id")
        .values_list("match_id", flat=True)
        .distinct()[:limit]
    )
