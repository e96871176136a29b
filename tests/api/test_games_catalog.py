"""GET /api/v1/games/: the games, their options, rules summary and move vocabulary."""

from __future__ import annotations

import pytest

from cardkit.engine import load_game

# The catalog reads no data, but every API request counts against a rate limit, whose
# counters are in the database (without Redis).
pytestmark = pytest.mark.django_db


def test_games_are_listed_with_options_rules_and_moves(api_client):
    response = api_client.get("/api/v1/games/")

    assert response.status_code == 200
    games = {game["name"]: game for game in response.json()}
    assert set(games) == {"durak", "volynshchik"}
    assert games["durak"]["players"] == {"min": 2, "max": 4}
    assert games["durak"]["formats"] == ["deal", "fool"]
    assert games["volynshchik"]["deck_sizes"] == [32]
    assert [m["type"] for m in games["durak"]["moves"]] == ["attack", "beat", "take"]
    assert [m["type"] for m in games["volynshchik"]["moves"]] == [
        "lead", "cover", "take", "declare",
    ]  # fmt: skip
    assert "trump" in games["durak"]["rules_summary"]


def test_every_listed_option_is_accepted_by_the_engine(api_client):
    for game in api_client.get("/api/v1/games/").json():
        for players in range(game["players"]["min"], game["players"]["max"] + 1):
            for deck_size in game["deck_sizes"]:
                load_game(game["name"], players=players, deck_size=deck_size)
