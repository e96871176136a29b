"""Which seats of a match a user holds, remembered by each process once the match started.

A user holds a seat directly (``Seat.user``) or through a client bot whose account it is
(``Seat.bot.account``); the play, stream and page views ask on every request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from games.models import Match
from games.rows import seat_indices

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

# Who holds the seats of a match is fixed once it has started (nothing changes a seat
# after that), so a process remembers the answer instead of asking the database on every
# request of a playing client. Bounded, least recently used first out.
_SEATS_HELD: OrderedDict[tuple[int, int], list[int]] = OrderedDict()
_SEATS_HELD_MAX = 20_000
_SEATS_HELD_LOCK = threading.Lock()


def seats_of(user: User | AnonymousUser | None, match: Match | int) -> list[int]:
    """Return the indices of the seats ``user`` holds in the match, lowest first.

    A user holds a seat directly (``Seat.user``) or through a client bot whose account it
    is (``Seat.bot.account``).
    """
    if user is None or not user.is_authenticated:
        return []
    match_id = match if isinstance(match, int) else match.pk
    key = (match_id, user.pk)
    with _SEATS_HELD_LOCK:
        held = _SEATS_HELD.get(key)
        if held is not None:
            _SEATS_HELD.move_to_end(key)
            return list(held)
    prefetched = getattr(match, "_prefetched_objects_cache", {}).get("seats")
    if prefetched is not None:
        held = [
            seat.index
            for seat in prefetched
            if seat.user_id == user.pk or (seat.bot_id and seat.bot.account_id == user.pk)
        ]
    else:
        held = seat_indices(match_id, user.pk)
    if isinstance(match, Match) and match.status != Match.Status.WAITING:
        seats_remember(match_id=match_id, user=user, seats=held)
    return held


def seats_forget_all() -> None:
    """Forget every remembered seat holder (tests, whose match ids repeat, call it)."""
    with _SEATS_HELD_LOCK:
        _SEATS_HELD.clear()


def seats_remember(*, match_id: int, user: User, seats: list[int]) -> None:
    """Remember the seats ``user`` holds in a match that has started (they never change)."""
    with _SEATS_HELD_LOCK:
        _SEATS_HELD[(match_id, user.pk)] = list(seats)
        _SEATS_HELD.move_to_end((match_id, user.pk))
        while len(_SEATS_HELD) > _SEATS_HELD_MAX:
            _SEATS_HELD.popitem(last=False)
