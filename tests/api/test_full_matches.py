"""Whole matches played through HTTP only, by the legal moves each seat's view offers,
for every player count of both games; the archived replay ends in the engine's result."""

from __future__ import annotations

import random

import pytest

from cardkit.engine import load_game

pytestmark = pytest.mark.django_db

VARIANTS = [
    ("durak", 2, 36, "deal"),
    ("durak", 3, 36, "deal"),
    ("durak", 4, 36, "deal"),
    ("durak", 2, 32, "deal"),
    ("durak", 3, 32, "deal"),
    ("durak", 4, 32, "deal"),
    ("durak", 2, 36, "fool"),
    ("volynshchik", 2, 32, "deal"),
    ("volynshchik", 3, 32, "deal"),
    ("volynshchik", 4, 32, "deal"),
    ("volynshchik", 5, 32, "deal"),
]


def play_through_http(clients, match_id: int, rng: random.Random) -> int:
    """Play until the match ends, each move by the seat to move; return the moves made."""
    url = f"/api/v1/matches/{match_id}"
    seat, moves = 0, 0
    while True:
        view = clients[seat].get(f"{url}/me/").json()
        if view["status"] != "active":
            return moves
        if not view["your_turn"]:
            seat = view["to_move"]
            continue
        answer = clients[seat].post(
            f"{url}/moves/", {"ply": view["ply"], "move": rng.choice(view["legal_moves"])}
        )
        assert answer.status_code == 200, answer.json()
        moves += 1


@pytest.mark.parametrize(
    ("game", "count", "deck_size", "format"),
    VARIANTS,
    ids=[f"{g}-{p}p-{d}-{f}" for g, p, d, f in VARIANTS],
)
def test_whole_match_over_http_ends_in_the_engines_result(
    players, api_client, game, count, deck_size, format
):
    seated = players(count)
    creator = seated[0][1]
    created = creator.post(
        "/api/v1/matches/",
        {"game": game, "players": count, "deck_size": deck_size, "format": format, "rated": True},
    ).json()
    match_id = created["id"]
    for _user, client in seated[1:]:
        assert client.post(f"/api/v1/matches/{match_id}/join/", {}).status_code == 200

    moves = play_through_http([client for _user, client in seated], match_id, random.Random(count))

    final = api_client.get(f"/api/v1/matches/{match_id}/").json()
    replay = api_client.get(f"/api/v1/matches/{match_id}/replay/").json()
    assert final["status"] == "finished" and final["ply"] == moves == len(replay["steps"]) - 1
    # The engine, given only the revealed seed and the logged moves, reaches the same end.
    engine = load_game(game, players=count, deck_size=deck_size)
    state = (
        engine.series(seed=replay["seed"]) if format == "fool" else engine.deal(seed=replay["seed"])
    )
    for step in replay["steps"][1:]:
        state = state.play(step["move"])
    expected = state.reveal()
    expected.pop("history")
    assert state.is_over
    assert replay["steps"][-1]["state"] == expected
    assert final["result"] == replay["result"] == state.result
    assert final["loser"] == state.result["loser"]
    if format == "fool":
        assert len(final["result"]["deals"]) >= 3
    verification = api_client.get(f"/api/v1/matches/{match_id}/verify/").json()
    assert verification["ok"] is True
