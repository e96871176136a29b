"""Durak's move vocabulary, illegal moves, the options (players, deck size) and what
a seat's view shows.

Every expected value is worked out by hand from docs/rules.md (tests/engine/durak_deals.py).
"""

from __future__ import annotations

import pytest

from cardkit.engine import IllegalMove, load_game
from tests.engine.durak_deals import (
    D2_HANDS,
    D2_TALON,
    TAKE,
    attack,
    beat,
    d2,
    full_deck,
    hand,
    moveset,
    snapshot,
)

# --- move vocabulary -----------------------------------------------------------------


def test_vocabulary_legal_moves_have_the_exact_json_shapes():
    state = d2()
    for move in state.legal_moves():
        assert set(move) == {"type", "cards"} and move["type"] == "attack"
        assert all(isinstance(c, str) and len(c) == 2 for c in move["cards"])
    state = state.play(attack("7S", "7H"))
    kinds = set()
    for move in state.legal_moves():
        kinds.add(move["type"])
        if move["type"] == "beat":
            assert set(move) == {"type", "covers"}
            assert all(len(pair) == 2 for pair in move["covers"])
        else:
            assert move == {"type": "take"}
    assert kinds == {"beat", "take"}


def test_vocabulary_attack_cards_in_any_order_are_the_same_move():
    one = d2().play(attack("7S", "7H", "7D"))
    other = d2().play(attack("7D", "7S", "7H"))
    assert one == other
    assert snapshot(one) == snapshot(other)


def test_vocabulary_covers_in_any_order_are_the_same_move():
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    one = state.play(beat("7S-8S", "7H-8H", "7D-8D", "7C-8C"))
    other = state.play(beat("7C-8C", "7D-8D", "7H-8H", "7S-8S"))
    assert one == other
    assert snapshot(one) == snapshot(other)


def test_vocabulary_legal_moves_list_each_set_once():
    state = d2()
    assert len(moveset(state.legal_moves())) == len(state.legal_moves())
    state = state.play(attack("7S", "7H", "7D", "7C"))
    assert len(moveset(state.legal_moves())) == len(state.legal_moves())


# --- illegal moves -------------------------------------------------------------------


def test_illegal_move_is_a_value_error():
    assert issubclass(IllegalMove, ValueError)


ILLEGAL_AT_ATTACK = [
    TAKE,
    attack(),
    attack("7S", "TS"),
    attack("8S"),
    attack("7S", "7S"),
    beat("7S-8S"),
]

ILLEGAL_AT_DEFENCE = [
    attack("8S"),
    beat("7S-8S"),
    beat("7S-8S", "7H-8H", "7D-8D", "7C-9S"),
    beat("7S-8S", "7H-8H", "7D-8D", "7C-8C", "7S-9S"),
    beat("7S-8C", "7H-8H", "7D-8D", "7C-8C"),
    beat("7S-8S", "7H-8H", "7D-8D", "7C-AC"),
    beat("7S-8S", "7H-8H", "7D-8D", "TS-8C"),
]


@pytest.mark.parametrize("move", ILLEGAL_AT_ATTACK)
def test_illegal_attack_raises_and_leaves_state_unchanged(move):
    state = d2()
    before = snapshot(state)
    with pytest.raises(IllegalMove):
        state.play(move)
    assert snapshot(state) == before
    assert state == d2()


@pytest.mark.parametrize("move", ILLEGAL_AT_DEFENCE)
def test_illegal_defence_raises_and_leaves_state_unchanged(move):
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    before = snapshot(state)
    with pytest.raises(IllegalMove):
        state.play(move)
    assert snapshot(state) == before


# --- options: players, deck size ------------------------------------------------------


@pytest.mark.parametrize("options", [{"players": 1}, {"players": 5}, {"deck_size": 52},
                                     {"deck_size": 24}])
def test_players_two_to_four_and_deck_of_36_or_32(options):
    with pytest.raises(ValueError):
        load_game("durak", **options)


def test_thirty_two_card_deck_is_seven_to_ace():
    game = load_game("durak", players=2, deck_size=32)
    with pytest.raises(ValueError):
        game.deal(deck=full_deck(36), dealer=0)
    with pytest.raises(ValueError):
        load_game("durak", players=2).deal(deck=full_deck(32), dealer=0)
    state = game.deal(deck=full_deck(32), dealer=0)
    assert state.view(0)["talon_size"] == 32 - 12
    assert all(c[0] != "6" for seat in (0, 1) for c in hand(state, seat))


def test_default_deck_is_thirty_six_cards():
    state = load_game("durak", players=4).deal(deck=full_deck(36), dealer=0)
    assert state.view(0)["talon_size"] == 36 - 24
    assert state.view(0)["hand_sizes"] == [6, 6, 6, 6]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seating_every_seat_gets_six_and_play_starts_at_dealers_left(players):
    for dealer in range(players):
        state = load_game("durak", players=players, deck_size=32).deal(
            deck=full_deck(32), dealer=dealer, opening="dealer_left")
        attacker = (dealer + 1) % players
        assert state.to_move == attacker
        assert state.view(0)["defender"] == (attacker + 1) % players
        assert state.view(0)["in_deal"] == list(range(players))


# --- public and private --------------------------------------------------------------


def test_view_shows_own_hand_and_trump_card_but_no_hidden_card():
    state = d2()
    hidden = set(D2_HANDS[1]) | set(D2_TALON)
    text = repr(state.view(0))
    assert sorted(state.view(0)["hand"]) == sorted(D2_HANDS[0])
    assert "QC" in text
    assert not [card for card in hidden if repr(card) in text]
