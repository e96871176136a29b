"""Durak rule 9: `fool` series of deals, letters, carried-over draws, dealer and opening."""

from __future__ import annotations

import random

import pytest

from cardkit.engine import IllegalMove, load_game
from cardkit.engine.cards import shuffled_deck


def play_series(series, rng: random.Random, on_deal_end=None):
    while not series.is_over:
        before = series
        series = series.play(rng.choice(series.legal_moves()))
        if (series.deal_number != before.deal_number or series.is_over) and on_deal_end:
            on_deal_end(before, series)
    return series


@pytest.mark.parametrize("players", [2, 3, 4])
def test_rule9_series_follows_letters_dealer_and_opening_after_each_deal(players):
    game = load_game("durak", players=players, deck_size=32)
    seen = {"decided": 0, "drawn": 0, "carried": 0}

    def check(before, after):
        deals = after.result["deals"] if after.is_over else after.view(0)["series"]["deals"]
        assert len(deals) == before.deal_number + 1
        loser = deals[-1]["loser"]
        letters = list(before.letters)
        if loser is None:
            seen["drawn"] += 1
            assert after.letters == letters
            assert after.carried_draws == before.carried_draws + 1
            assert after.dealer == before.dealer
            expected = game.deal(after.deck_of(after.deal_number), dealer=before.dealer,
                                 opening="lowest_trump")
        else:
            seen["decided"] += 1
            if before.carried_draws:
                seen["carried"] += 1
            letters[loser] = min(5, letters[loser] + 1 + before.carried_draws)
            assert after.letters == letters
            assert after.carried_draws == 0
            if after.is_over:
                assert letters[loser] == 5
                assert after.result["loser"] == loser
                return
            assert after.dealer == loser
            expected = game.deal(after.deck_of(after.deal_number), dealer=loser,
                                 opening="dealer_left")
        assert after.deal == expected

    # Draws are rare under random play: play series until some were carried over.
    for seed in range(3000):
        play_series(game.series(dealer=seed % players, seed=seed), random.Random(seed), check)
        if seed >= 30 and seen["carried"] >= 2:
            break
    assert seen["decided"] and seen["drawn"] and seen["carried"] >= 2, seen


def test_rule9_first_deal_of_a_series_opens_with_the_lowest_trump():
    game = load_game("durak", players=3)
    series = game.series(dealer=1, seed=99)
    assert series.deal == game.deal(series.deck_of(0), dealer=1, opening="lowest_trump")
    assert series.letters == [0, 0, 0]
    assert not series.is_over and series.result is None


def test_rule9_series_with_explicit_decks_plays_them_in_order():
    game = load_game("durak", players=2)
    decks = [shuffled_deck(i, 36) for i in range(40)]
    series = game.series(dealer=0, decks=decks)
    rng = random.Random(5)
    while not series.is_over:
        number = series.deal_number
        if series.deal.ply == 0:
            assert series.deal.to_json()["hands"] == game.deal(
                decks[number], dealer=series.dealer,
                opening=series.deal.to_json()["opening"],
            ).to_json()["hands"]
        series = series.play(rng.choice(series.legal_moves()))
    assert series.result["loser"] in (0, 1)
    assert 5 in series.letters
    assert len(series.result["deals"]) == series.deal_number + 1


def test_rule9_series_loser_holds_all_five_letters_and_nobody_else_does():
    game = load_game("durak", players=4)
    series = play_series(game.series(dealer=0, seed="x"), random.Random(1))
    result = series.result
    assert result["letters"][result["loser"]] == 5
    assert sorted(result["letters"])[-2] < 5
    with pytest.raises(IllegalMove):
        series.play({"type": "take"})
    assert series.to_move is None and series.legal_moves() == []


def test_rule9_series_runs_out_of_explicit_decks_with_a_clear_error():
    game = load_game("durak", players=2)
    series = game.series(dealer=0, decks=[shuffled_deck(1, 36)])
    rng = random.Random(2)
    with pytest.raises(ValueError, match="deck for deal 2"):
        while True:
            series = series.play(rng.choice(series.legal_moves()))
