"""Celery tasks of the bots app: thin, idempotent wrappers around ``bots.driver`` and
``bots.services``.

Three tasks that lower modules send are defined beside them, under their names here
(``bot_call`` in ``bots.pool``, ``bot_call_dispatch`` in ``bots.calls``,
``bot_pause_mail`` in ``bots.notices``), and imported below so that this module still
names every task of the app and a worker registers them all; nothing below imports this
module.
"""

from __future__ import annotations

import logging

from celery import shared_task

from bots import driver, leases, services
from bots.calls import bot_call_dispatch
from bots.models import Bot
from bots.notices import bot_pause_mail
from bots.pool import bot_call
from games.events import MatchChanged

__all__ = [
    "bot_call", "bot_call_dispatch", "bot_pause_mail", "match_changed_handle",
    "match_turn_started", "ping_bot", "ping_http_bots", "play_bot_turns",
    "resume_abandoned_turns",
]

logger = logging.getLogger(__name__)

# Moves one task plays before it hands the rest of the match to a new task, so that a long
# match between bots does not hold one worker for minutes. Every move is bounded (a
# built-in decision takes under a second, an HTTP bot its time limit), so a task is too.
MOVES_PER_TASK = 200


def match_changed_handle(event: MatchChanged) -> None:
    """Hand the turn to the bot driver when the seat to move is one the arena drives.

    Subscribed to ``games.events`` in ``BotsConfig.ready()``. A seat held by a person or a
    client bot needs nothing: its player reads the match (or long-polls) and the deadline
    watch enforces the clock.
    """
    if not event.arena_to_move:
        return
    try:
        match_turn_started.delay(event.match_id, event.ply)
    except Exception:
        # The change is committed; a lost message must not turn its answer into a 500. A
        # lapsed claim left in its place is the sweep's evidence to hand the turn over.
        logger.exception(
            "Could not send match_turn_started(%s, %s)", event.match_id, event.ply,
            extra={"match_id": event.match_id},
        )  # fmt: skip
        try:
            leases.lease_lapsed_mark(match_id=event.match_id, ply=event.ply)
        except Exception:
            logger.exception("match %s: could not mark its notice lost", event.match_id)


@shared_task(ignore_result=True)
def match_turn_started(match_id: int, ply: int) -> None:
    """Let the bot driver play the seat to move at ``ply``, when the arena plays it.

    Sent after a commit that gives the turn to an HTTP or built-in bot (and when a match
    starts with one to move). Returns at once if the match moved on or ended.
    """
    from games.models import Match

    match = (
        Match.objects.filter(pk=match_id).only("status", "ply", "to_move", "arena_seats").first()
    )
    if match is None or match.status != Match.Status.ACTIVE or match.ply != ply:
        return
    if not match.arena_to_move:
        return
    if driver.bot_turns_play(match_id=match_id, max_moves=MOVES_PER_TASK, pool=True) == (
        MOVES_PER_TASK
    ):
        play_bot_turns.delay(match_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def play_bot_turns(match_id: int) -> None:
    """Play the match's built-in and HTTP bot moves until someone else is to move.

    Safe to run twice: a second run finds the turn played (or claimed) and stops.
    """
    if driver.bot_turns_play(match_id=match_id, max_moves=MOVES_PER_TASK, pool=True) == (
        MOVES_PER_TASK
    ):
        play_bot_turns.delay(match_id)


# -- HTTP bots' calls (bots.calls) ---------------------------------------------------------
# bot_call (defined in bots.pool) runs on the I/O pool (queue BOTS_CALL_QUEUE, the
# bot-calls worker), which records the answer itself; bot_call_dispatch (bots.calls) on
# the CPU workers. Acknowledged on receipt: a call lost with its process is taken up again
# when the match's claim lapses (beat's resume_abandoned_turns), and a call redelivered
# late is refused by its send_by.


@shared_task(ignore_result=True)
def resume_abandoned_turns() -> int:
    """Hand to a driver again every arena turn whose claim lapsed (its holder, a CPU
    worker or the I/O pool, stopped renewing it: it died); return how many. Run by beat
    every 10 s (bots migration 0008), so such a turn is taken up within a claim's time
    and 10 s. A turn with no claim waits in its queue, however long: no time since the
    last move is taken as evidence."""
    from django.utils import timezone

    from bots.selectors import arena_turns_abandoned

    turns = arena_turns_abandoned(now=timezone.now())
    for match_id, ply in turns:
        match_turn_started.delay(match_id, ply)
    return len(turns)


@shared_task(ignore_result=True)
def expire_challenges() -> int:
    """Expire the challenges that waited for an answer longer than
    ``CHALLENGES_EXPIRE_AFTER``; return how many. Run by beat every 30 s (bots migration
    0014). Safe to run twice: a second run finds none."""
    from bots.challenges import challenges_expire

    return len(challenges_expire())


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def ping_bot(bot_id: int) -> None:
    """Ping an HTTP bot and record its health; other bots and unknown ids are skipped."""
    if Bot.objects.filter(pk=bot_id, kind=Bot.Kind.HTTP).exists():
        services.bot_ping(bot_id=bot_id)


@shared_task(ignore_result=True)
def ping_http_bots() -> int:
    """Queue a ping of every enabled HTTP bot; return how many. For a periodic task
    (django-celery-beat), so that a bot that recovered is marked healthy again."""
    bot_ids = list(
        Bot.objects.filter(kind=Bot.Kind.HTTP, enabled=True).values_list("pk", flat=True)
    )
    for bot_id in bot_ids:
        ping_bot.delay(bot_id)
    return len(bot_ids)
