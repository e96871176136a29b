"""Rating pools: which matches are rated together, and the key that names each pool.

Bots are rated apart for each game and, in Durak, each number of players: a 2-player
Durak rating says little about the same bot at a table of four. Volynshchik has one
pool. The key is the pool's name everywhere (URLs, rows, tasks); ``pool_of`` makes it
from a match's game and players, ``pool_game`` reads them back. No Django here.
"""

from __future__ import annotations

POOLS = ("durak-2p", "durak-3p", "durak-4p", "volynshchik")

_DURAK = "durak-"


def pool_of(game: str, players: int) -> str:
    """Return a match's rating pool: ``durak-2p``, ``durak-3p``, ``durak-4p`` or ``volynshchik``."""
    return f"{_DURAK}{players}p" if game == "durak" else game


def pool_game(pool: str) -> tuple[str, int | None]:
    """Return the game and number of players of a pool's matches (None: any number)."""
    if pool.startswith(_DURAK):
        return "durak", int(pool.removeprefix(_DURAK).removesuffix("p"))
    return pool, None


def pool_title(pool: str) -> str:
    """Return the pool's name for people: ``Durak, 2 players``, ``Volynshchik``."""
    game, players = pool_game(pool)
    return game.title() if players is None else f"{game.title()}, {players} players"
