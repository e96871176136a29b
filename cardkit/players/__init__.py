"""The built-in players, run in-process: `random`, `greedy` and `strong`, for both games.

Pure Python on top of ``cardkit.engine``; nothing here imports Django.

    >>> from cardkit.players import decision_rng, get_player
    >>> player = get_player("greedy", "durak")
    >>> move = player.choose(state.view(seat), state.legal_moves(), decision_rng(seed, seat, ply))

A player sees only the seat's view, never the full state.  Every choice is a function of
the view, the legal moves and ``rng``, so a server that seeds ``rng`` with
``decision_rng(match_seed, seat, ply)`` replays an archived game's decisions exactly.
"""

from __future__ import annotations

import hashlib
import random
from typing import Protocol

from cardkit.engine import GAME_CLASSES

from .greedy import GreedyPlayer, RandomPlayer, SloppyGreedyPlayer
from .strong import DEFAULT_BUDGET, StrongPlayer

PLAYERS: tuple[str, ...] = ("random", "greedy", "strong")
# Players for tests of the tests (a known-worse greedy); no bot of them is registered.
WEAKENED: tuple[str, ...] = ("sloppy",)
_CLASSES = {
    "random": RandomPlayer, "greedy": GreedyPlayer, "strong": StrongPlayer,
    "sloppy": SloppyGreedyPlayer,
}

__all__ = [
    "DEFAULT_BUDGET",
    "PLAYERS",
    "WEAKENED",
    "GreedyPlayer",
    "Player",
    "RandomPlayer",
    "SloppyGreedyPlayer",
    "StrongPlayer",
    "decision_rng",
    "get_player",
]


class Player(Protocol):
    """What every built-in player offers."""

    name: str
    game: str

    def choose(self, view: dict, legal_moves: list[dict], rng: random.Random) -> dict:
        """Return one of ``legal_moves`` for the seat whose ``view`` this is."""
        ...


def get_player(name: str, game_name: str, *, budget: int | None = None) -> Player:
    """Return the built-in player ``name`` for ``game_name``; raise ValueError if unknown.

    ``budget`` (playouts per decision) is for `strong` only; it defaults to DEFAULT_BUDGET.
    """
    if game_name not in GAME_CLASSES:
        raise ValueError(f"unknown game {game_name!r}; the games are {', '.join(GAME_CLASSES)}")
    if name not in _CLASSES:
        raise ValueError(f"unknown built-in player {name!r}; the players are {', '.join(PLAYERS)}")
    if name == "strong":
        return StrongPlayer(game_name, DEFAULT_BUDGET if budget is None else budget)
    if budget is not None:
        raise ValueError(f"the {name} player takes no budget; only strong searches")
    return _CLASSES[name](game_name)


def decision_rng(match_seed: str | int, seat: int, ply: int) -> random.Random:
    """Return the generator for the decision of ``seat`` at move ``ply`` of a match.

    The seed is hashed with SHA-256 (Python's ``hash()`` changes between processes).
    ``ply`` must identify the decision within the match: in a `fool` series, whose deals
    each count their moves from 0, pass the move number within the whole match (or fold
    the deal number into ``match_seed``).
    """
    digest = hashlib.sha256(f"cardserver-bot:{match_seed}:{seat}:{ply}".encode()).digest()
    return random.Random(int.from_bytes(digest, "big"))
