"""What a game is, declared once on its class: players, decks, formats, move vocabulary.

As OpenSpiel's ``GameType``/``GameInfo``: a game class holds an ``INFO``, its
constructor checks options against it, and the server's catalog (``games.catalog``)
is built from it rather than written a second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class EndReason(StrEnum):
    """Why a deal ended by the rules (a match may also end by a forfeit code)."""

    LOSER = "loser"  # one seat was left holding cards
    BOTH_OUT = "both_out"  # Durak: the last two went out together, a draw
    REPETITION = "repetition"  # the fifth occurrence of a position, a draw
    MOVE_LIMIT = "move_limit"  # the deal reached 1,000 moves, a draw


@dataclass(frozen=True, slots=True)
class MoveType:
    """One kind of move: its ``type``, the fields it carries besides, and an example."""

    type: str
    fields: tuple[str, ...]
    description: str
    example: dict[str, Any]

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key of a move of this type, ``"type"`` first."""
        return ("type", *self.fields)


@dataclass(frozen=True, slots=True)
class GameInfo:
    """The facts of a game: its options with their defaults, formats and moves."""

    name: str
    title: str
    min_players: int
    max_players: int
    default_players: int
    deck_sizes: tuple[int, ...]
    default_deck_size: int
    formats: tuple[str, ...]
    moves: tuple[MoveType, ...]

    def move_type(self, name: str) -> MoveType:
        """Return the move type called ``name``; raise KeyError when the game has none."""
        for move in self.moves:
            if move.type == name:
                return move
        raise KeyError(name)
