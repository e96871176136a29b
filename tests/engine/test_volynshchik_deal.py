"""Volynshchik's players and deck, the deal (rule 1) and the face-down reserve (rule 2).

Every expected value was worked out by hand from docs/rules.md
(tests/engine/volynshchik_deals.py).
"""

from __future__ import annotations

import json

import pytest

from cardkit.engine import load_game
from tests.engine.volynshchik_deals import (
    DECK32,
    FIVE,
    FIVE_SCRIPT,
    P2,
    P3,
    assert_illegal,
    cards,
    deal,
    expect,
    five_after,
    hand,
    leads,
    legal,
    mv,
    run,
)

# --------------------------------------------------------------------------- players and deck


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_two_to_five_players_with_the_32_card_deck(players):
    game = load_game("volynshchik", players=players, deck_size=32)
    state = game.deal(deck=list(DECK32), dealer=0)
    assert len(state.view(0)["hand_sizes"]) == players
    assert sum(state.view(0)["hand_sizes"]) == 32 - players


@pytest.mark.parametrize("options", [{"players": 1}, {"players": 6}, {"deck_size": 36}])
def test_other_player_counts_and_deck_sizes_are_refused(options):
    with pytest.raises(ValueError):
        load_game("volynshchik", **options)


@pytest.mark.parametrize(
    "deck",
    [DECK32[:-1], DECK32[:-1] + ["6S"], DECK32 + ["6S"], DECK32[:-1] + ["7S"]],
)
def test_a_deck_other_than_the_32_cards_is_refused(deck):
    with pytest.raises(ValueError):
        load_game("volynshchik", players=3).deal(deck=deck, dealer=0)


# --------------------------------------------------------------------------- rule 1: deal


@pytest.mark.parametrize(("players", "dealer"), [(2, 0), (2, 1), (3, 1), (4, 2), (5, 0), (5, 3)])
def test_rule1_whole_deck_dealt_one_at_a_time_from_dealers_left(players, dealer):
    deck = list(reversed(DECK32))
    state = load_game("volynshchik", players=players).deal(deck=deck, dealer=dealer)
    for k in range(players):
        seat = (dealer + 1 + k) % players
        dealt = deck[k::players]
        assert set(state.view(seat)["hand"]) == set(dealt[:-1])
        assert state.view(seat)["reserve"] == dealt[-1]


def test_rule1_explicit_three_player_deal_by_hand():
    # Dealer 1: the top card goes to seat 2, then seat 0, then seat 1, and round again.
    state = load_game("volynshchik", players=3).deal(deck=list(DECK32), dealer=1)
    assert hand(state, 2) == set(cards("7S TS KS 8H JH AH 9D QD 7C TC"))
    assert state.view(2)["reserve"] == "KC"
    assert hand(state, 0) == set(cards("8S JS AS 9H QH 7D TD KD 8C JC"))
    assert state.view(0)["reserve"] == "AC"
    assert hand(state, 1) == set(cards("9S QS 7H TH KH 8D JD AD 9C"))
    assert state.view(1)["reserve"] == "QC"


@pytest.mark.parametrize(
    ("players", "dealer", "sizes"),
    [
        (2, 0, [15, 15]),
        (3, 0, [9, 10, 10]),
        (3, 2, [10, 10, 9]),
        (4, 1, [7, 7, 7, 7]),
        (5, 0, [5, 6, 6, 5, 5]),
        (5, 3, [6, 5, 5, 5, 6]),
    ],
)
def test_rule1_first_players_get_one_card_more(players, dealer, sizes):
    # Hand sizes exclude the reserve card, which is never part of the hand (rule 2).
    state = load_game("volynshchik", players=players).deal(deck=list(DECK32), dealer=dealer)
    for seat in range(players):
        assert state.view(seat)["hand_sizes"] == sizes
        assert len(state.view(seat)["hand"]) == sizes[seat]


@pytest.mark.parametrize("layout", [P2, P3, FIVE], ids=["two", "three", "five"])
def test_hand_built_layouts_deal_exactly_the_chosen_hands_and_reserves(layout):
    state = deal(**layout)
    for seat in range(layout["players"]):
        assert hand(state, seat) == set(cards(layout["hands"][seat]))
        assert state.view(seat)["reserve"] == layout["reserves"][seat]


# --------------------------------------------------------------------------- rule 2: reserve


def test_rule2_last_dealt_card_is_the_face_down_reserve_never_played():
    state = deal(**P2)
    # Seat 0's reserve AD is neither in his hand nor among his leads.
    assert "AD" not in state.view(0)["hand"]
    assert legal(state) == leads(P2["hands"][0])
    assert_illegal(state, mv("lead AD"))
    # Seat 1 declares clubs facing AH: his reserve 7C is now face up, yet it still
    # cannot cover, although a club trump could.
    state = run(state, "lead AH", "declare")
    assert state.view(1)["reserve"] == "7C"
    assert "7C" not in state.view(1)["hand"]
    assert legal(state) == expect("cover 8C", "cover KC", "cover AC", "take")
    assert_illegal(state, mv("cover 7C"))


def test_rule2_reserve_is_not_counted_in_hand_sizes():
    state = deal(**P2)
    assert state.view(1)["hand_sizes"] == [15, 15]


def test_rule2_another_seats_reserve_never_appears_in_a_view_until_declared():
    states = [five_after(count) for count in range(len(FIVE_SCRIPT) + 1)]
    for state in states[:-1]:  # Once the deal is over everything may be shown.
        for seat in range(5):
            text = json.dumps(state.view(seat))
            assert f'"{FIVE["reserves"][seat]}"' in text
            for other in range(5):
                if other != seat:
                    assert f'"{FIVE["reserves"][other]}"' not in text, (seat, other)


def test_no_view_shows_another_seats_face_down_hand_cards_at_the_deal():
    state = deal(**FIVE)
    for seat in range(5):
        text = json.dumps(state.view(seat))
        for other in range(5):
            if other != seat:
                for card in cards(FIVE["hands"][other]):
                    assert f'"{card}"' not in text, (seat, other, card)
