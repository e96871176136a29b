"""Rating pools: a match's pool key and, from the key, the matches it holds."""

import pytest

from tournaments.pools import POOLS, pool_game, pool_of, pool_title


@pytest.mark.parametrize("pool", POOLS)
def test_pool_game_reads_back_the_game_and_players_that_pool_of_spelled(pool):
    game, players = pool_game(pool)
    assert pool_of(game, players or 3) == pool


def test_durak_pools_are_per_table_size_and_volynshchik_has_one():
    assert [pool_of("durak", n) for n in (2, 3, 4)] == ["durak-2p", "durak-3p", "durak-4p"]
    assert pool_of("volynshchik", 3) == pool_of("volynshchik", 4) == "volynshchik"
    assert pool_game("volynshchik") == ("volynshchik", None)


def test_pool_titles_name_the_game_and_table_size():
    assert [pool_title(pool) for pool in POOLS] == [
        "Durak, 2 players",
        "Durak, 3 players",
        "Durak, 4 players",
        "Volynshchik",
    ]
