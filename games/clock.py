"""The clock of a match: each turn's deadline, the watch that enforces it, the sweep that
backs the watch up, and the forfeit on time.

A turn opens with a deadline one move time limit away (``turn_open``). Three things end
a match whose seat to move lets it pass, each enough on its own while it works: the
match's deadline watch (``games.tasks.enforce_move_deadline``, sent by
``games.tasks.deadline_watch_send``), the periodic sweep (``matches_overdue_forfeit``),
and the move service, which forfeits a move that comes after the deadline plus
``DEADLINE_GRACE``. The clock imports none of its tasks: they wrap it.

A seat the arena plays (an HTTP or built-in bot) is on the bot driver's clock, not this
one: the watch and the sweep leave its turn alone, however late. Its deadline passing is
no evidence that anything failed (the turn may wait in a queue, which is the arena's
time, not the bot's); the driver's claim lapsing is, and ``bots`` acts on that
(``bots.tasks.resume_abandoned_turns``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from games.events import Change, match_changed_announce
from games.models import Match
from games.records import match_records_count
from games.selectors import match_snapshot_current, match_state, overdue_match_ids

logger = logging.getLogger(__name__)

# How long after a deadline a move is still accepted and the deadline check waits, so that
# a move sent just in time is not lost to network and queueing delays.
DEADLINE_GRACE = 1.0
# The longest a deadline watch waits before it looks again. A Redis broker gives a
# message that a worker has held unacknowledged for longer than its visibility timeout
# (two hours here, cardserver/settings/queues.py) to another worker as well, and a watch
# due in a day, held all that time, would be duplicated every time, each copy sending
# itself again.
DEADLINE_WATCH_MAX_WAIT = 1800.0


def turn_open(match: Match, now: datetime) -> None:
    """Start the turn of the match's seat to move at ``now``, due one time limit later."""
    match.turn_started_at = now
    match.deadline_at = now + timedelta(seconds=match.move_time_limit)


def move_is_late(match: Match, now: datetime) -> bool:
    """Return whether a move received at ``now`` comes after the deadline and its grace."""
    return bool(
        match.deadline_at and now > match.deadline_at + timedelta(seconds=DEADLINE_GRACE)
    )


def match_deadline_enforce(
    *,
    match_id: int,
    ply: int | None = None,
    now: datetime | None = None,
    by_driver: bool = False,
) -> bool:
    """Forfeit the match on time if its seat to move let the deadline pass.

    With ``ply``, only if the match is still at that ply. Return whether it was forfeited.
    Idempotent: a match that moved on, ended, or is within its time does not change.

    The clock of a seat the arena plays (an HTTP or built-in bot) is kept by the bot
    driver, which alone forfeits it (``by_driver``): its deadline passing may mean the
    turn waits in the arena's queue, and a bot must not lose for the arena's time, so it
    is left as it is (a driver that died is found by its lapsed claim, in ``bots``).
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        now = now or timezone.now()
        if match.status != Match.Status.ACTIVE or match.deadline_at is None:
            return False
        if ply is not None and match.ply != ply:
            return False
        if now < match.deadline_at:
            return False
        if not by_driver and match.arena_to_move:
            return False
        match_forfeit_on_time(match=match, seat=match.to_move, now=now)
    return True


def matches_overdue_forfeit(*, now: datetime | None = None) -> list[int]:
    """Forfeit on time every active match whose deadline passed; return their ids.

    Each match is forfeited in a transaction of its own. A seat the arena plays is not
    forfeited (``match_deadline_enforce``).
    """
    now = now or timezone.now()
    return [
        match_id
        for match_id in overdue_match_ids(now=now)
        if match_deadline_enforce(match_id=match_id, now=now)
    ]


def match_forfeit_on_time(*, match: Match, seat: int, now: datetime) -> None:
    """End the locked, active ``match`` with ``seat`` as its loser on time.

    Should be called inside a transaction holding the match row's lock.
    """
    detail = f"seat {seat} did not move within the time limit of {match.move_time_limit:g} s"
    match_forfeit_locked(match=match, seat=seat, code="timeout", detail=detail, now=now)


def match_forfeit_locked(*, match: Match, seat: int, code: str, detail: str, now: datetime) -> None:
    """End the active ``match`` with ``seat`` as its loser (a fool series is lost too).

    Should be called inside a transaction holding the match row's lock. Here, below
    ``games.services``, because the clock is what forfeits most; a resignation and the
    driver's forfeits come through ``games.match_endings.match_forfeit``.
    """
    state = match_state(match)
    if not match_snapshot_current(match):
        # Saved below with the forfeit: a finished match's snapshot is its final state.
        match.snapshot, match.snapshot_ply = state.to_json(), match.ply
    public = state.view(None)
    if match.format == Match.Format.FOOL:
        result = {
            "loser": seat,
            "letters": public["series"]["letters"],
            "deals": public["series"]["deals"],
        }
    else:
        result = {"loser": seat, "out_order": public["out_order"]}
    logger.info(
        "match %s: seat %s loses at ply %s (%s): %s",
        match.pk, seat, match.ply, code, detail, extra={"match_id": match.pk},
    )
    match.status = Match.Status.FINISHED
    match.result = result
    match.loser = seat
    match.end_reason = code
    match.forfeit_seat = seat
    match.forfeit_reason = detail[:500]
    match.finished_at = now
    match.seed_revealed = True
    match.to_move = None
    match.turn_started_at = None
    match.deadline_at = None
    match.save(
        update_fields=[
            "status", "result", "loser", "end_reason", "forfeit_seat", "forfeit_reason",
            "finished_at", "seed_revealed", "to_move", "turn_started_at", "deadline_at",
            "snapshot", "snapshot_ply",
        ]
    )  # fmt: skip
    match_records_count(match=match)
    match_changed_announce(match, Change.FINISHED)
