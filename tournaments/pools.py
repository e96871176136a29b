"""Rating pools: which matches are rated together, and the key that names each pool.

Bots are rated apart for each game and each number of players: a 2-player rating says
little about the same bot at a table of four, and Volynshchik for two and for five
players are different games in practice. The key is the pool's name everywhere (URLs,
rows, tasks); ``pool_of`` makes it from a match's game and players, ``pool_game`` reads
them back. No Django here.
"""

from __future__ import annotations

POOLS = (
    "durak-2p",
    "durak-3p",
    "durak-4p",
    "volynshchik-2p",
    "volynshchik-3p",
    "volynshchik-4p",
    "volynshchik-5p",
)


def pool_of(game: str, players: int) -> str:
    """Return a match's rating pool: ``durak-2p`` ... ``durak-4p``, ``volynshchik-2p`` ..."""
    return f"{game}-{players}p"


def pool_game(pool: str) -> tuple[str, int]:
    """Return the game and number of players of a pool's matches."""
    game, players = pool.rsplit("-", 1)
    return game, int(players.removesuffix("p"))


def pool_title(pool: str) -> str:
    """Return the pool's name for people: ``Durak, 2 players``."""
    game, players = pool_game(pool)
    return f"{game.title()}, {players} players"
