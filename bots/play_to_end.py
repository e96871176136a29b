"""Playing a match of server-side bots to its end (tournaments, the ladder, sequential tests).

Built on the driver (``bots.driver``): it plays the match's turns again for as long as
another driver's claim on the match is live.
"""

from __future__ import annotations

import time

from django.utils import timezone

from bots.driver import _play
from bots.models import BotTurnLease


def match_play_to_end(*, match_id: int, poll: float = 0.2, pool: bool = False) -> str:
    """Play a match of server-side bots until it ends; return its status.

    ``bot_turns_play`` returns at once when another call holds the match's claim: a
    duplicate task, or a worker that died holding it. Then wait and try again for as long
    as that claim is live (its holder renews it while it plays), however long the match
    waits; a claim that lapses is taken over by the next try. Return "active" when no
    one holds the match and no move could be played here (a seat the arena does not
    play is to move).

    With ``pool``, return "active" as soon as an HTTP bot's call is on the I/O pool (this
    call's or another driver's): the match is played on by the pool's answers, and
    the caller learns of its end from ``games.events`` (``Change.FINISHED``) instead of
    holding a worker process while the bots think. Call it outside any transaction.
    """
    from games.models import Match

    while True:
        driver = _play(match_id, max_moves=None, pool=pool, holder="")
        status = Match.objects.values_list("status", flat=True).get(pk=match_id)
        if status != Match.Status.ACTIVE:
            return status
        if driver.pool and (driver.handed_off or _call_in_flight(match_id)):
            return status
        if not driver.played and not _claim_live(match_id):
            return status
        time.sleep(poll)


def _claim_live(match_id: int) -> bool:
    """Whether a driver holds a live claim on the match."""
    return BotTurnLease.objects.filter(match_id=match_id, expires_at__gt=timezone.now()).exists()


def _call_in_flight(match_id: int) -> bool:
    """Whether an HTTP bot's call of the match is queued or in flight on the I/O pool."""
    return BotTurnLease.objects.filter(
        match_id=match_id, calling_owner__isnull=False, expires_at__gt=timezone.now()
    ).exists()
