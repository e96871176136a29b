"""Durak rules 1-4: the deal, the first attacker, the defender and the attack.

Every expected value is worked out by hand from docs/rules.md (tests/engine/durak_deals.py).
"""

from __future__ import annotations

import pytest

from cardkit.engine import IllegalMove, load_game
from tests.engine.durak_deals import (
    D2_HANDS,
    D2_TALON,
    D2_TRUMP,
    D4_R1,
    R2A_HANDS,
    R2A_TALON,
    R2A_TRUMP,
    TAKE,
    attack,
    beat,
    build_deck,
    d2,
    d4,
    d4_after_seat2_out,
    expected_attacks,
    full_deck,
    hand,
    hands,
    moveset,
    play,
    r2a,
)

# --- rule 1: deal --------------------------------------------------------------------


def test_rule1_deal_gives_six_cards_two_at_a_time_from_dealers_left():
    deck = full_deck(36)
    state = load_game("durak", players=2).deal(deck=deck, dealer=0)
    # Seat 1 is the dealer's left neighbour and receives cards 1-2, 5-6, 9-10.
    assert hand(state, 1) == sorted(deck[0:2] + deck[4:6] + deck[8:10])
    assert hand(state, 0) == sorted(deck[2:4] + deck[6:8] + deck[10:12])
    assert state.view(0)["hand_sizes"] == [6, 6]


def test_rule1_three_players_deal_clockwise_from_dealers_left():
    deck = full_deck(36)[::-1]
    state = load_game("durak", players=3).deal(deck=deck, dealer=1)
    # Order of receiving: seat 2, seat 0, seat 1.
    assert hand(state, 2) == sorted(deck[0:2] + deck[6:8] + deck[12:14])
    assert hand(state, 0) == sorted(deck[2:4] + deck[8:10] + deck[14:16])
    assert hand(state, 1) == sorted(deck[4:6] + deck[10:12] + deck[16:18])
    assert state.view(0)["trump_card"] == deck[18]
    assert state.view(0)["talon_size"] == 18


def test_rule1_four_players_thirty_two_cards_deal_wraps_past_last_seat():
    deck = full_deck(32)
    state = load_game("durak", players=4, deck_size=32).deal(deck=deck, dealer=2)
    # Order of receiving: seat 3, 0, 1, 2.
    for i, seat in enumerate([3, 0, 1, 2]):
        expected = deck[2 * i:2 * i + 2] + deck[8 + 2 * i:10 + 2 * i] + deck[16 + 2 * i:18 + 2 * i]
        assert hand(state, seat) == sorted(expected)
    assert state.view(0)["trump_card"] == deck[24]
    # The talon is the 7 cards after the trump card plus the trump card under them.
    assert state.view(0)["talon_size"] == 8


def test_rule1_next_card_is_face_up_trump_and_counts_in_the_talon():
    deck = build_deck(D2_HANDS, D2_TRUMP, D2_TALON, dealer=1, deck_size=32)
    assert deck[12] == "QC"
    state = d2()
    for seat in (0, 1):
        view = state.view(seat)
        assert view["trump_card"] == "QC"
        assert view["talon_size"] == 32 - 12
    assert hands(state) == [sorted(h) for h in D2_HANDS]


def test_rule1_trump_card_is_drawn_last():
    # Four sevens beaten by four eights: seat 0 draws the top four talon cards, then
    # seat 1 draws the last three and the face-up trump AD under them.
    state = play(d4(), *D4_R1)
    assert hand(state, 0) == sorted(["KS", "KH", "KD", "QC", "KC", "AC"])
    assert hand(state, 1) == sorted(["9S", "9H", "9D", "AS", "AH", "AD"])
    assert state.view(0)["talon_size"] == 0


# --- rule 2: first attacker ----------------------------------------------------------


def test_rule2_lowest_trump_holder_attacks_first():
    state = r2a()
    assert state.to_move == 2
    view = state.view(1)
    assert (view["attacker"], view["defender"]) == (2, 0)


def test_rule2_face_up_trump_card_does_not_count_as_held():
    # The trump card 6H is the lowest trump but lies under the talon; seat 1 holds 7H,
    # seat 0 holds 8H. Dealer 1, so the dealer's left neighbour (2) must not attack.
    hands_ = [
        ["8H", "6S", "7S", "8S", "9S", "TS"],
        ["7H", "6C", "7C", "8C", "9C", "TC"],
        ["6D", "7D", "8D", "9D", "TD", "JD"],
    ]
    deck = build_deck(hands_, "6H", dealer=1)
    state = load_game("durak", players=3).deal(deck=deck, dealer=1, opening="lowest_trump")
    assert state.to_move == 1
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (1, 2)


def test_rule2_lowest_trump_holder_may_be_the_dealer():
    hands_ = [
        ["6S", "7S", "8S", "9S", "TS", "JS"],
        ["AS", "6H", "7H", "8H", "9H", "TH"],
    ]
    # Trump spades: seat 0, the dealer, holds 6S; seat 1 holds only AS.
    deck = build_deck(hands_, "QS", dealer=0)
    state = load_game("durak", players=2).deal(deck=deck, dealer=0, opening="lowest_trump")
    assert state.to_move == 0
    assert state.view(1)["defender"] == 1


def test_rule2_no_trump_in_any_hand_dealers_left_attacks():
    hands_ = [
        ["6S", "7S", "8S", "9S", "TS", "JS"],
        ["6C", "7C", "8C", "9C", "TC", "JC"],
        ["6D", "7D", "8D", "9D", "TD", "JD"],
    ]
    deck = build_deck(hands_, "AH", dealer=1)
    state = load_game("durak", players=3).deal(deck=deck, dealer=1, opening="lowest_trump")
    assert state.to_move == 2
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (2, 0)


def test_rule2_a_lone_deal_is_a_first_deal_so_lowest_trump_opens_by_default():
    deck = build_deck(R2A_HANDS, R2A_TRUMP, R2A_TALON, dealer=0)
    state = load_game("durak", players=3).deal(deck=deck, dealer=0)
    assert state.to_move == 2


def test_rule2_dealer_left_opening():
    # Same cards as the lowest-trump test; seat 2 holds the lowest trump but the
    # dealer's left neighbour (1) opens a deal that is not a first or replayed deal.
    state = r2a(opening="dealer_left")
    assert state.to_move == 1
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (1, 2)


def test_rule2_dealer_left_opening_wraps_to_seat_zero():
    deck = full_deck(32)
    state = load_game("durak", players=4, deck_size=32).deal(
        deck=deck, dealer=3, opening="dealer_left")
    assert state.to_move == 0
    assert state.view(0)["defender"] == 1


# --- rule 3: defender ----------------------------------------------------------------


def test_rule3_defender_is_attackers_left_neighbour_and_only_he_answers():
    state = r2a()  # seat 2 attacks, seat 0 defends, seat 1 stays out of the round
    state = state.play(attack("6D"))
    assert state.to_move == 0
    assert {m["type"] for m in state.legal_moves()} == {"beat", "take"}
    state = state.play(beat("6D-9H"))
    # The round is over at once: nobody else adds cards, the table is cleared.
    assert state.view(1)["table"] == []
    assert sorted(state.view(1)["discard"]) == ["6D", "9H"]
    assert state.to_move == 0
    assert {m["type"] for m in state.legal_moves()} == {"attack"}


def test_rule3_defender_is_attackers_left_neighbour_still_in_deal():
    # Seat 2 is out; seat 1 beats seat 0 and attacks; his left neighbour 2 is skipped.
    state = play(d4_after_seat2_out(), attack("KS"), beat("KS-AS"))
    assert state.to_move == 1
    view = state.view(0)
    assert (view["attacker"], view["defender"]) == (1, 3)
    assert moveset(state.legal_moves()) == expected_attacks(["AH", "AD"], 2)


# --- rule 4: attack ------------------------------------------------------------------


def test_rule4_attack_cards_share_one_rank():
    state = d2()
    assert state.to_move == 0
    assert moveset(state.legal_moves()) == expected_attacks(D2_HANDS[0], 6)
    assert len(state.legal_moves()) == 15 + 3
    for bad in (attack("7S", "TS"), attack("7S", "7H", "TH")):
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule4_four_of_a_rank_may_be_played_at_once():
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    assert state.to_move == 1
    assert sorted(state.view(1)["table"]) == sorted(["7S", "7H", "7D", "7C"])
    assert state.view(1)["hand_sizes"] == [2, 6]


def test_rule4_attack_never_exceeds_defender_hand_size():
    # Seat 1 beats KS KH KD with his last three cards and is out; seat 3 attacks seat 0,
    # who holds three cards, while seat 3 holds all four jacks.
    state = play(d4_after_seat2_out(), attack("KS", "KH", "KD"), beat("KS-AS", "KH-AH", "KD-AD"))
    assert state.to_move == 3
    assert state.view(3)["hand_sizes"][0] == 3
    seat3 = ["QS", "QH", "QD", "9C", "TC", "JC", "JS", "JH", "JD"]
    assert hand(state, 3) == sorted(seat3)
    assert moveset(state.legal_moves()) == expected_attacks(seat3, 3)
    with pytest.raises(IllegalMove):
        state.play(attack("JS", "JH", "JD", "JC"))
    assert state.play(attack("JS", "JH", "JD")).to_move == 0


def test_rule4_attacker_cannot_pass():
    state = d2()
    assert all(m["type"] == "attack" and m["cards"] for m in state.legal_moves())
    for bad in (attack(), TAKE):
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule4_attacker_cannot_attack_with_cards_he_does_not_hold():
    state = d2()
    for bad in (attack("8S"), attack("7S", "7H", "7D", "7C", "7C"), attack("QC")):
        with pytest.raises(IllegalMove):
            state.play(bad)
