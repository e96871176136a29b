"""The rules of Durak and Volynshchik as pure Python: no Django, no I/O.

    >>> from cardkit.engine import load_game
    >>> game = load_game("durak", players=2)
    >>> state = game.deal(seed=1, dealer=0)
    >>> state = state.play(state.legal_moves()[0])

Every rule follows docs/rules.md; the module docs say where a choice was needed.
"""

from __future__ import annotations

import functools
from typing import Any

from .durak import DurakGame, DurakState
from .errors import IllegalMove, InvalidMove
from .info import EndReason, GameInfo, MoveType
from .moves import move_key, same_move
from .series import DurakSeries
from .volynshchik import VolynshchikGame, VolynshchikState

Game = DurakGame | VolynshchikGame
State = DurakState | VolynshchikState

# The game classes by name, in the order the catalog lists them.
GAME_CLASSES: dict[str, type[Game]] = {
    game.INFO.name: game for game in (DurakGame, VolynshchikGame)
}

__all__ = [
    "GAME_CLASSES", "DurakGame", "DurakSeries", "DurakState", "EndReason", "Game",
    "GameInfo", "IllegalMove", "InvalidMove", "MoveType", "State", "VolynshchikGame",
    "VolynshchikState", "load_game", "load_state", "move_key", "same_move",
]


def load_game(name: str, **options: Any) -> Game:
    """Return the game ``name`` with its options; raise ValueError for anything unknown."""
    try:
        cls = GAME_CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown game {name!r}; the games are {', '.join(GAME_CLASSES)}"
        ) from None
    unknown = set(options) - {"players", "deck_size"}
    if unknown:
        raise ValueError(f"unknown option(s) for {name}: {', '.join(sorted(unknown))}")
    return cls(**options)


@functools.lru_cache(maxsize=64)
def _shared_game(name: str, options: tuple[tuple[str, Any], ...]) -> Game:
    return load_game(name, **dict(options))


def load_state(data: dict) -> State | DurakSeries:
    """Rebuild a state (or a Durak series) from its ``to_json()`` form."""
    if not isinstance(data, dict) or data.get("game") not in GAME_CLASSES:
        raise ValueError("not a serialised game state")
    # A game holds only tables computed from its options and never changes, so the
    # states loaded from JSON share one game per options instead of rebuilding them.
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ValueError("not a serialised game state")
    try:
        game = _shared_game(data["game"], tuple(sorted(options.items())))
    except TypeError:
        raise ValueError("not a serialised game state: options are not plain values") from None
    if data.get("format") == "fool":
        return DurakSeries._from_json(game, data)
    return game.state_from_json(data)
