"""Volynshchik's next player (rule 6), the end (rule 7), the move vocabulary and illegal
moves. The fivefold repetition draw is tested elsewhere.

Every expected value was worked out by hand from docs/rules.md
(tests/engine/volynshchik_deals.py).
"""

from __future__ import annotations

import json

import pytest

from cardkit.engine import load_game
from tests.engine.volynshchik_deals import (
    DECK32,
    FIVE_SCRIPT,
    P2,
    P3,
    assert_illegal,
    cards,
    covers,
    deal,
    expect,
    five_after,
    hand,
    key,
    leads,
    legal,
    mv,
    run,
)

# --------------------------------------------------------------------------- rule 6: next player


def test_rule6_next_player_is_the_next_seat_clockwise():
    state = five_after(2)  # Seat 1 took AH, so seat 2 leads.
    assert state.to_move == 2
    assert state.view(2)["hand_sizes"] == [5, 7, 5, 5, 5]
    assert run(state, "lead 7S").to_move == 3
    assert five_after(7).to_move == 0  # After seat 4's own move, seat 0 faces 7D.


def test_rule6_next_player_skips_seats_without_cards():
    state = five_after(26)  # Seat 0 took JC: the pile is empty, seat 1 leads.
    assert state.to_move == 1
    assert state.view(1)["in_deal"] == [0, 1]
    assert legal(state) == leads("KS KD AH")
    state = run(state, "lead KS")
    # Seats 2, 3 and 4 are out: seat 0 faces KS and must cover with AS.
    assert state.to_move == 0
    assert legal(state) == covers("AS")


def test_rule6_out_seats_get_no_turn_after_pile_removal():
    # Seat 3 went out covering with his last card: the next seat holding cards is 4.
    assert five_after(24).to_move == 4
    # Seat 2 went out on his own move: the next seat, 3, faces the card.
    assert five_after(23).to_move == 3


# --------------------------------------------------------------------------- rule 7: end


def test_rule7_last_player_holding_cards_loses_with_out_order():
    state = five_after(28)
    assert not state.is_over and state.result is None
    assert state.to_move == 0
    assert legal(state) == leads("JC")
    state = run(state, "lead JC")
    assert state.is_over
    assert state.to_move is None
    assert state.result == {"loser": 1, "out_order": [2, 3, 4, 0]}
    assert state.legal_moves() == []
    assert state.view(1)["out_order"] == [2, 3, 4, 0]
    assert sorted(state.view(1)["hand"]) == sorted(["KD", "AH"])


def test_rule7_game_is_not_over_while_two_players_hold_cards():
    for count in range(len(FIVE_SCRIPT)):
        state = five_after(count)
        assert not state.is_over
        assert state.result is None
        assert state.to_move is not None


def test_rule7_no_move_is_accepted_after_the_end():
    state = five_after(len(FIVE_SCRIPT))
    for move in ["take", "declare", "lead KD", "cover KD"]:
        assert_illegal(state, mv(move))


# Two players: seat 0 holds the top cards and leads each suit upwards, so seat 1 can
# never cover and takes every card; seat 0's fifteenth lead is his last card.
P2_RUNAWAY = dict(
    players=2,
    dealer=1,
    hands={
        0: "JS QS KS AS JH QH KH AH JD QD KD AD QC KC AC",
        1: "7S 8S 9S TS 7H 8H 9H TH 7D 8D 9D TD 8C 9C TC",
    },
    reserves={0: "7C", 1: "JC"},
)


def test_rule7_two_players_leader_goes_out_and_the_other_loses():
    state = deal(**P2_RUNAWAY)
    order = cards(P2_RUNAWAY["hands"][0])
    for number, card in enumerate(order, start=1):
        assert state.to_move == 0
        assert state.view(0)["pile"] == []
        state = run(state, f"lead {card}")
        if number == len(order):
            break
        assert state.to_move == 1
        assert legal(state) == expect("declare", "take")
        state = run(state, "take")
        assert state.view(1)["hand_sizes"] == [15 - number, 15 + number]
    assert state.is_over
    assert state.to_move is None
    assert state.result == {"loser": 1, "out_order": [0]}


# --------------------------------------------------------------------------- move vocabulary


def test_move_vocabulary_is_exact():
    shapes = {"lead": {"type", "card"}, "cover": {"type", "card"},
              "take": {"type"}, "declare": {"type"}}
    seen = set()
    states = [five_after(count) for count in range(len(FIVE_SCRIPT))]
    states.append(run(deal(**P2), "lead AH", "declare"))
    states.append(run(deal(**P2), "lead AH"))
    for state in states:
        for move in state.legal_moves():
            assert set(move) == shapes[move["type"]], move
            if "card" in move:
                assert move["card"] in DECK32
            seen.add(move["type"])
    assert seen == set(shapes)


def test_the_own_move_is_a_lead_by_the_same_seat_who_stays_to_move():
    state = run(deal(**P3), "lead 7S")
    mover = state.to_move
    state = run(state, "cover 8S")
    assert state.to_move == mover == 1
    assert {json.loads(m)["type"] for m in legal(state)} == {"lead"}


# --------------------------------------------------------------------------- illegal moves


@pytest.mark.parametrize(
    ("prefix", "move"),
    [
        ([], "take"),
        ([], "declare"),
        ([], "cover 7S"),
        ([], "lead 8S"),  # Seat 1's card.
        ([], "lead AD"),  # Seat 0's own reserve.
        ([], "lead 7C"),  # Seat 1's reserve.
        (["lead 9S"], "lead TS"),
        (["lead 9S"], "cover 9S"),  # Already on the pile.
        (["lead 9S"], "cover 7C"),  # Seat 1's reserve, not declared.
        (["lead AH"], "cover AH"),
        (["lead AH", "declare"], "declare"),
        (["lead AH", "declare"], "cover 7C"),
        (["lead AH", "declare"], "cover TH"),
        (["lead AH", "declare", "cover 8C"], "cover KC"),
        (["lead AH", "declare", "cover 8C"], "take"),
        (["lead AH", "declare", "cover 8C"], "lead 8C"),
        (["lead 9S", "cover AS", "lead KD", "declare"], "cover 7D"),  # KD is a diamond.
    ],
)
def test_illegal_moves_raise_and_leave_the_state_unchanged(prefix, move):
    state = run(deal(**P2), *prefix)
    assert key(mv(move)) not in legal(state)
    assert_illegal(state, mv(move))
    # The state is still usable: every listed move is still accepted.
    for legal_move in state.legal_moves():
        state.play(legal_move)


def test_four_players_take_down_the_pile_until_a_cover_is_forced():
    # Natural deck, dealer 3: seat k gets every fourth card, so each seat's cards
    # beat those of the seat before it, rank for rank.
    state = load_game("volynshchik", players=4).deal(deck=list(DECK32), dealer=3)
    assert hand(state, 0) == set(cards("7S JS 7H JH 7D JD 7C"))
    assert state.view(0)["reserve"] == "JC"
    state = run(state, "lead JD")
    assert legal(state) == covers("QD")
    state = run(state, "cover QD", "lead 8S")
    assert state.to_move == 2
    assert legal(state) == covers("9S KS")
    state = run(state, "cover KS", "lead 9C")
    assert legal(state) == covers("TC")
    state = run(state, "cover TC", "lead AS")
    assert state.to_move == 0
    assert legal(state) == expect("declare", "take")
    state = run(state, "declare")
    assert state.view(3)["revealed_reserves"] == ["JC", None, None, None]
    assert legal(state) == expect("cover 7C", "take")
    state = run(state, "take")
    # TC and 9C are clubs, his own trump suit: only a higher club would cover them.
    assert state.view(0)["pile"][-1] == "TC"
    assert legal(state) == expect("take")
    state = run(state, "take")
    # Facing 9C he now holds the TC he just took, a higher club: he must cover with it.
    assert state.view(0)["pile"] == ["JD", "QD", "8S", "KS", "9C"]
    assert state.to_move == 0
    assert legal(state) == covers("TC")
    state = run(state, "cover TC")
    assert state.view(0)["pile"] == ["JD", "QD", "8S", "KS", "9C", "TC"]
    assert legal(state) == leads("7S JS 7H JH 7D 7C AS")
    assert state.view(0)["hand_sizes"] == [7, 5, 5, 5]


@pytest.mark.parametrize(
    "move",
    [{"type": "pass"}, {"type": "lead"}, {"type": "lead", "card": "6S"},
     {"type": "lead", "card": "XX"}, {"type": "cover"}, {"card": "7S"}],
)
def test_unreadable_moves_are_illegal_moves_and_leave_the_state_unchanged(move):
    assert_illegal(deal(**P2), move)


def test_rule7_two_players_covering_with_last_card_ends_the_deal():
    state = deal(**P2_RUNAWAY)
    for card in cards("JS QS KS AS JH QH KH JD QD KD AD QC KC"):
        state = run(state, f"lead {card}", "take")
    assert hand(state, 0) == {"AH", "AC"}
    # Seat 1 declares clubs (JC), trumps AH with 8C and plays 9C; seat 0 must cover with
    # his last card, AC: he is out and seat 1, the only one holding cards, has lost.
    state = run(state, "lead AH", "declare", "cover 8C", "lead 9C")
    assert state.to_move == 0
    assert legal(state) == covers("AC")
    state = run(state, "cover AC")
    assert state.is_over
    assert state.to_move is None
    assert state.result == {"loser": 1, "out_order": [0]}
    assert state.view(1)["pile"] == []
    assert sorted(state.view(1)["removed"]) == sorted(["AH", "8C", "9C", "AC"])
