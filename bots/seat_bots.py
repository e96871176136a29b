"""The bots at a match's seats, as the driver reads them at a match's first turn.

A match's seats are fixed once it started; the I/O pool, which plays each HTTP turn with a
driver of its own, keeps them a few seconds instead of reading them at every turn.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from bots.models import Bot
from cardserver.sql import RowQuery

# The seats' bots of the matches the I/O pool plays, kept for SEAT_BOTS_KEPT seconds: a
# match's seats are fixed once it started, and reading them costs more of the pool's CPU
# than anything else of a turn. A bot's new URL or secret reaches its matches as late.
SEAT_BOTS_KEPT = 5.0
_SEAT_BOTS: OrderedDict[int, tuple[float, dict]] = OrderedDict()
_SEAT_BOTS_LOCK = threading.Lock()


def _seat_bots(match_id: int, *, recent: bool) -> dict[int, Bot]:
    """Return the bot of each seat of the match that a bot holds; with ``recent``, as read
    within the last SEAT_BOTS_KEPT seconds."""
    now = time.monotonic()
    if recent:
        with _SEAT_BOTS_LOCK:
            kept = _SEAT_BOTS.get(match_id)
            if kept is not None and kept[0] > now:
                return kept[1]
    seat_bots = {bot.seat_index: bot for bot in _seat_bots_query().all([match_id])}
    if recent:
        with _SEAT_BOTS_LOCK:
            _SEAT_BOTS[match_id] = (now + SEAT_BOTS_KEPT, seat_bots)
            _SEAT_BOTS.move_to_end(match_id)
            while len(_SEAT_BOTS) > 10_000 or next(iter(_SEAT_BOTS.values()))[0] <= now:
                _SEAT_BOTS.popitem(last=False)
    return seat_bots


_SEAT_BOTS_QUERY: RowQuery | None = None


def _seat_bots_query() -> RowQuery:
    """The seats' bots in one precompiled statement: a match's bots are read again every
    SEAT_BOTS_KEPT seconds, more often than a pool's turns come back to the match when
    it is busy, and the ORM's compiling of that query was a sixth of the I/O pool's CPU."""
    global _SEAT_BOTS_QUERY
    if _SEAT_BOTS_QUERY is None:
        from games.models import Seat

        seat = Seat._meta.db_table
        _SEAT_BOTS_QUERY = RowQuery(
            Bot,
            f"JOIN {seat} s ON s.bot_id = {{table}}.id WHERE s.match_id = %s",
            annotations={"seat_index": 's."index"'},
        )
    return _SEAT_BOTS_QUERY
