"""Celery tasks of matches: thin, idempotent wrappers around ``games.clock``.

Each task takes ids, loads what it needs, returns early when its work is already done
(the match moved on or ended), and calls one service. Running one twice is harmless.

The clock of a match is kept by three things, each enough on its own while it works:

- ``enforce_move_deadline``, the match's deadline watch: sent when the match starts
  (unless the arena plays every seat, below), due at the first deadline; when it runs it
  forfeits the match on time if the turn's deadline passed, and otherwise sends itself
  again, due at the current deadline (or in ``DEADLINE_WATCH_MAX_WAIT`` at the most).
  So a match has one pending task, however many moves it has, and no message is sent
  per move.
- ``sweep_overdue_matches``, run by Celery beat every few seconds: forfeits every active
  match whose deadline passed, for the watches that were lost (a broker flushed, a
  worker killed).
- ``games.move_services.match_move_submit``: a move that comes after its deadline (plus a
  grace) loses on time instead of being played.

A seat the arena plays (an HTTP or built-in bot) is on the bot driver's clock: the watch
and the sweep leave such a turn alone (it may wait in the arena's queue, which is not
the bot's time), the driver forfeits an HTTP bot that does not answer within its time
from the request sent, and built-in players never lose on time. A driver that died is
found by its lapsed claim (``bots.tasks.resume_abandoned_turns``). A match whose every
seat the arena plays is sent no watch.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from games import clock
from games.models import Match

logger = logging.getLogger(__name__)

# Seconds after which the deadline watch looks again at an overdue turn it handed to the
# bot driver (the sweep, every 10 s, does the same).
ARENA_TURN_RECHECK = 10.0


@shared_task(bind=True, ignore_result=True)
def enforce_move_deadline(self, match_id: int) -> bool:
    """Forfeit the match on time if its turn's deadline passed; else watch the next one.

    Return whether the match was forfeited. Run eagerly (``CELERY_TASK_ALWAYS_EAGER``),
    it checks once and does not send itself again, which would run it again at once.
    """
    try:
        if clock.match_deadline_enforce(match_id=match_id):
            return True
    except Match.DoesNotExist:
        return False  # a message about a match that is gone (a test database flushed)
    deadline = (
        Match.objects.filter(pk=match_id, status=Match.Status.ACTIVE)
        .values_list("deadline_at", flat=True)
        .first()
    )
    if deadline is not None and not self.request.is_eager:
        countdown = (deadline - timezone.now()).total_seconds()
        if countdown <= 0:
            # Past the deadline and not forfeited: a seat the arena plays, on the bot
            # driver's clock. Look again later, not every second, in case a person's or
            # a client bot's seat is to move by then.
            countdown = ARENA_TURN_RECHECK
        deadline_watch_send(match_id, countdown + clock.DEADLINE_GRACE)
    return False


# Here beside its task, not in ``games.clock``, so that the clock never imports its tasks:
# the tasks wrap the clock, and the services that start a match send its first watch.
def deadline_watch_send(match_id: int, countdown: float) -> None:
    """Send the match's deadline watch (``enforce_move_deadline``), due in ``countdown``
    seconds or in ``clock.DEADLINE_WATCH_MAX_WAIT``, whichever is sooner."""
    try:
        enforce_move_deadline.apply_async(
            (match_id,), countdown=min(countdown, clock.DEADLINE_WATCH_MAX_WAIT)
        )
    except Exception:
        logger.exception(
            "Could not send enforce_move_deadline(%s)", match_id, extra={"match_id": match_id}
        )


@shared_task(ignore_result=True)
def sweep_overdue_matches() -> list[int]:
    """Forfeit every active match whose deadline passed (the backstop of lost watches).

    Run by Celery beat every few seconds (schedule: games migration 0003, editable in the
    admin).
    """
    forfeited = clock.matches_overdue_forfeit()
    for match_id in forfeited:
        logger.info(
            "match %s forfeited on time by the sweep", match_id, extra={"match_id": match_id}
        )
    return forfeited
