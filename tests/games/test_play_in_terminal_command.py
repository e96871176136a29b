"""`python manage.py play_in_terminal`: a person plays a deal against random players."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command


def run_play(*args: str, lines: list[str]) -> str:
    out = io.StringIO()
    call_command(
        "play_in_terminal", *args, stdin=io.StringIO("".join(f"{x}\n" for x in lines)), stdout=out
    )
    return out.getvalue()


@pytest.mark.parametrize(("game", "players"), [("durak", 2), ("durak", 4), ("volynshchik", 3)])
def test_play_command_plays_a_whole_deal_choosing_listed_moves(game, players):
    output = run_play(game, "--players", str(players), "--seed", "7", lines=["1"] * 400)
    assert "Order of going out" in output
    assert any(word in output for word in ("You are the fool", "lost the deal", "drawn"))


def test_play_command_explains_bad_input_and_asks_again():
    output = run_play(
        "durak", "--seed", "7", lines=["attack ZZ", "99", "beat 6S", "frobnicate", "quit"]
    )
    assert "not a card" in output or "must defend" in output or "does not hold" in output
    assert "choose a number from 1 to" in output
    assert "attack card:covering card" in output
    assert "not a move: 'frobnicate'" in output


def test_play_command_refuses_a_bad_player_count():
    with pytest.raises(CommandError, match="2 to 4 players"):
        run_play("durak", "--players", "5", lines=[])
