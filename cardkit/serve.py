"""The built-in strategies as ``choose(view, legal_moves)``, for ``cardkit serve`` and
``cardkit client``:

    cardkit serve greedy --port 9001 --secret S

The secret can come from the environment instead: ``ARENA_BOT_SECRET=S``. The bot plays
whichever game each request names, with ``cardkit.players.get_player(strategy, game)``.
Like ``cardkit.server``, this module needs only the standard library.
"""

from __future__ import annotations

import random
import threading

from cardkit.server import Choose

SECRET_ENV = "ARENA_BOT_SECRET"


def load_strategy(name: str, seed: int | None = None) -> Choose:
    """Return a ``choose(view, legal_moves)`` that plays the built-in strategy ``name``.

    Raise ValueError for a strategy that does not exist. Without ``cardkit.players`` (a kit
    copied alone), only ``random`` is available, played here.
    """
    rng = random.Random(seed)
    try:
        from cardkit.players import get_player
    except ImportError as exc:
        if exc.name != "cardkit.players":
            raise
        if name != "random":
            raise ValueError(
                f"strategy {name!r} needs cardkit.players, which is missing; use random"
            ) from None
        return lambda view, legal_moves: rng.choice(legal_moves)
    players: dict[str, object] = {}
    lock = threading.Lock()

    def player_for(game: str):
        with lock:
            if game not in players:
                players[game] = get_player(name, game)
            return players[game]

    # Fail now, not at the first request, when the strategy does not exist.
    player_for("durak")

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        return player_for(view["game"]).choose(view, legal_moves, rng)

    return choose
