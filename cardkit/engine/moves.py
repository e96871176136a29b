"""A move's canonical form: one key for every spelling of the same move.

A move crosses the boundary as a JSON object (``{"type": "attack", "cards": ["8C",
"8D"]}``). Its lists are sets: the cards of an attack, the pairs of a beat (each pair
stays in order, attack card first), so ``["8D", "8C"]`` and ``["8C", "8D"]`` are one
move. The engine reads either; the server compares moves (a repeated request, a bot's
answer against the legal moves) by this key.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any


def move_key(move: Any) -> Hashable | None:
    """Return the canonical form of ``move``: equal for two spellings of one move, hashable.

    Return None for what cannot be a move: not a JSON object, or a list whose elements
    cannot be ordered (cards mixed with numbers).
    """
    if not isinstance(move, dict):
        return None
    items = []
    for name, value in move.items():
        if isinstance(value, list):
            try:
                value = tuple(sorted(_frozen(element) for element in value))
            except TypeError:
                return None
        items.append((name, value))
    try:
        return tuple(sorted(items))
    except TypeError:
        return None


def same_move(a: Any, b: Any) -> bool:
    """Return whether ``a`` and ``b`` are one move (both readable as moves)."""
    key = move_key(a)
    return key is not None and key == move_key(b)


def _frozen(value: Any) -> Any:
    return tuple(_frozen(element) for element in value) if isinstance(value, list) else value
