"""The one announcement ``games`` makes to the layers above it: a match changed.

``games`` knows nothing of bots, streams or tournaments; it says, after the commit that
changed a match, what changed, and whoever cares subscribes (``bots`` hands the turn to
its driver, the live streams wake their waiters). A subscriber registers once, in its
``AppConfig.ready()``; a handler that raises is logged and the others still run, since
the change is committed by then and no handler can undo it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from django.db import transaction

if TYPE_CHECKING:
    from games.models import Match

logger = logging.getLogger(__name__)


class Change(StrEnum):
    """What happened to the match."""

    JOINED = "joined"  # a seat was filled; the match is still waiting
    STARTED = "started"  # every seat is filled and the first deal is dealt
    MOVED = "moved"  # one or more moves were logged; the match goes on
    FINISHED = "finished"  # the match ended: by the rules, a resignation or a forfeit
    ABORTED = "aborted"  # ended with no result (cancelled, or aborted by its tournament)
    # Nothing changed but the clock: the turn of a seat the arena drives is past its
    # deadline (its driver died, or the notice was lost), so it is handed over again.
    OVERDUE = "overdue"


@dataclass(frozen=True)
class MatchChanged:
    """A committed change of one match, as its row stands after the commit.

    ``arena_to_move`` is true when the seat to move is one the arena plays (an HTTP or
    built-in bot) and the match's creator asked the arena to drive those turns; it is what
    the bot driver needs to decide without a query.
    """

    match_id: int
    change: Change
    ply: int
    status: str
    to_move: int | None
    arena_to_move: bool = False


Handler = Callable[[MatchChanged], None]

_handlers: list[Handler] = []


def match_changed_subscribe(handler: Handler) -> None:
    """Call ``handler`` with every ``MatchChanged`` from now on (once per handler)."""
    if handler not in _handlers:
        _handlers.append(handler)


def match_changed_unsubscribe(handler: Handler) -> None:
    if handler in _handlers:
        _handlers.remove(handler)


def match_changed_announce(
    match: Match, change: Change, *, arena_to_move: bool = False
) -> None:
    """After the current transaction commits (at once outside one), tell every subscriber
    that ``match`` changed. The values are read now, from the row as this transaction
    leaves it."""
    event = MatchChanged(
        match_id=match.pk,
        change=change,
        ply=match.ply,
        status=str(match.status),
        to_move=match.to_move,
        arena_to_move=arena_to_move,
    )
    transaction.on_commit(lambda: _deliver(event))


def _deliver(event: MatchChanged) -> None:
    for handler in list(_handlers):
        try:
            handler(event)
        except Exception:
            logger.exception(
                "match %s: a handler of %s failed", event.match_id, event.change,
                extra={"match_id": event.match_id},
            )  # fmt: skip
