"""Counting positions for the endless-deal rule (the fifth occurrence ends the deal drawn).

States are immutable, but copying a table of every earlier position on each move would
make a move cost grow with the deal.  So one mutable ``PositionCounts`` is shared by the
states along one line of play: a state extends it in place when it is still the newest
state on that line, and forks a copy when play branches from an older state (a search
bot trying several moves from one position).  Positions before an irreversible change
(a card leaves play, the talon shrinks, a player goes out, a trump is declared) can
never recur, so the engine starts a new table there and keeps each table short.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

REPETITIONS_TO_DRAW = 5
MOVE_LIMIT = 1000


class PositionCounts:
    __slots__ = ("counts", "keys")

    def __init__(self, keys: Iterable[Hashable] = ()) -> None:
        self.keys: list[Hashable] = []
        self.counts: dict[Hashable, int] = {}
        for key in keys:
            self.keys.append(key)
            self.counts[key] = self.counts.get(key, 0) + 1


def record(
    table: PositionCounts, length: int, key: Hashable
) -> tuple[PositionCounts, int]:
    """Add ``key`` after the first ``length`` positions of ``table``.

    Return the table that now holds it (``table`` itself, or a fork when ``table`` has
    already been extended past ``length`` by another line of play) and how many times the
    position has occurred, this time included.
    """
    if len(table.keys) != length:
        table = PositionCounts(table.keys[:length])
    table.keys.append(key)
    count = table.counts.get(key, 0) + 1
    table.counts[key] = count
    return table, count
