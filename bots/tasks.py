"""Celery tasks of the bots app: thin, idempotent wrappers around ``bots.services``."""

from __future__ import annotations

from celery import shared_task

from bots import services
from bots.models import Bot

# Moves one task plays before it hands the rest of the match to a new task, so that a long
# match between bots does not hold one worker for minutes. Every move is bounded (a
# built-in decision takes under a second, an HTTP bot its time limit), so a task is too.
MOVES_PER_TASK = 200


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def play_bot_turns(match_id: int) -> None:
    """Play the match's built-in and HTTP bot moves until someone else is to move.

    Safe to run twice: a second run finds the turn played (or claimed) and stops.
    """
    if services.bot_turns_play(match_id=match_id, max_moves=MOVES_PER_TASK) == MOVES_PER_TASK:
        play_bot_turns.delay(match_id)


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
