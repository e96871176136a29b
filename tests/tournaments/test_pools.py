"""Rating pools: a match's pool key and, from the key, the matches it holds."""

import pytest

from tournaments.pools import POOLS, pool_game, pool_of, pool_title


@pytest.mark.parametrize("pool", POOLS)
def test_pool_game_reads_back_the_game_and_players_that_pool_of_spelled(pool):
    game, players = pool_game(pool)
    assert pool_of(game, players) == pool


def test_every_game_has_a_pool_per_table_size():
    assert [pool_of("durak", n) for n in (2, 3, 4)] == ["durak-2p", "durak-3p", "durak-4p"]
    assert [pool_of("volynshchik", n) for n in (2, 3, 4, 5)] == [
        "volynshchik-2p", "volynshchik-3p", "volynshchik-4p", "volynshchik-5p",
    ]  # fmt: skip
    assert pool_game("volynshchik-5p") == ("volynshchik", 5)


def test_pool_titles_name_the_game_and_table_size():
    assert [pool_title(pool) for pool in POOLS] == [
        "Durak, 2 players",
        "Durak, 3 players",
        "Durak, 4 players",
        "Volynshchik, 2 players",
        "Volynshchik, 3 players",
        "Volynshchik, 4 players",
        "Volynshchik, 5 players",
    ]
