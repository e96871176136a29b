"""How a Durak deal ends: going out (rule 8), the result (rule 10), and the draw of an
endless deal (a position's fifth occurrence, the thousandth move).

Every expected value is worked out by hand from docs/rules.md (tests/engine/durak_deals.py).
"""

from __future__ import annotations

import pytest

from cardkit.engine import IllegalMove
from tests.engine.durak_deals import (
    D2_R1,
    D2_R2,
    D2_R3,
    D2_R4,
    D2_R5,
    D4_R1,
    D4_R2,
    TAKE,
    attack,
    beat,
    d2,
    d4,
    d4_after_seat2_out,
    hand,
    hands,
    play,
)

# --- rule 8: going out ---------------------------------------------------------------


def test_rule8_nobody_leaves_while_talon_holds_cards():
    state = play(d4(), attack("7S", "7H", "7D"), beat("7S-8S", "7H-8H", "7D-8D"))
    assert state.view(0)["talon_size"] == 2
    assert state.view(0)["in_deal"] == [0, 1, 2, 3]
    assert state.view(0)["out_order"] == []


def test_rule8_going_out_is_checked_after_the_round_not_mid_round():
    state = play(d4(), *D4_R1, *D4_R2, attack("JS", "JH", "JD"))
    # Seat 2 has just played his last cards, but the round is not over yet.
    view = state.view(0)
    assert view["hand_sizes"][2] == 0
    assert view["in_deal"] == [0, 1, 2, 3]
    assert view["out_order"] == []
    state = state.play(TAKE)
    assert state.view(0)["in_deal"] == [0, 1, 3]
    assert state.view(0)["out_order"] == [2]


def test_rule8_last_player_holding_cards_is_the_loser():
    # After five rounds seat 1 holds KC and seat 0 holds AC, talon empty. Seat 1
    # attacks KC; seat 0 could beat it but takes, so seat 1 is out and seat 0 loses.
    state = play(d2(), *D2_R1, *D2_R2, *D2_R3, *D2_R4, *D2_R5)
    assert hands(state) == [["AC"], ["KC"]]
    assert state.to_move == 1
    state = play(state, attack("KC"), TAKE)
    assert state.is_over
    assert state.result == {"loser": 0, "out_order": [1]}
    assert state.to_move is None


def test_rule8_four_players_loser_and_order_of_going_out():
    state = play(d4_after_seat2_out(), attack("KS", "KH", "KD"), beat("KS-AS", "KH-AH", "KD-AD"),
                 attack("9C"), beat("9C-AC"))
    assert state.to_move == 0  # seat 0 beat; his defender is seat 3
    assert state.view(0)["defender"] == 3
    state = play(state, attack("QC"), TAKE)
    assert state.to_move == 0  # next after seat 3 holding cards: seat 0
    assert not state.is_over
    state = play(state, attack("KC"), TAKE)
    assert state.is_over
    assert state.result == {"loser": 3, "out_order": [2, 1, 0]}


def test_rule8_draw_when_last_two_empty_together_attacker_listed_first():
    state = play(d2(), *D2_R1, *D2_R2, *D2_R3)
    assert state.view(0)["talon_size"] == 0
    assert hand(state, 0) == sorted(["AS", "AH", "AD", "JD", "JC", "AC"])
    assert hand(state, 1) == sorted(["KS", "KH", "KD", "QD", "KC", "QC"])
    state = play(state, *D2_R4, *D2_R5, attack("KC"))
    assert not state.is_over
    state = state.play(beat("KC-AC"))
    assert state.is_over
    # Seat 1 attacked and seat 0 defended: the attacker is listed first.
    assert state.result == {"loser": None, "out_order": [1, 0]}


# --- rule 10: result -----------------------------------------------------------------


def test_rule10_result_is_none_while_the_deal_runs():
    state = d2()
    assert not state.is_over
    assert state.result is None
    state = play(state, *D2_R1, *D2_R2)
    assert state.result is None and not state.is_over


def test_rule10_finished_deal_names_loser_or_none_and_out_order():
    drawn = play(d2(), *D2_R1, *D2_R2, *D2_R3, *D2_R4, *D2_R5, attack("KC"), beat("KC-AC"))
    decided = play(d2(), *D2_R1, *D2_R2, *D2_R3, *D2_R4, *D2_R5, attack("KC"), TAKE)
    assert drawn.result == {"loser": None, "out_order": [1, 0]}
    assert decided.result == {"loser": 0, "out_order": [1]}
    for state in (drawn, decided):
        assert state.to_move is None
        assert state.legal_moves() == []
        assert state.view(0)["out_order"] == state.result["out_order"]


def test_rule10_no_move_is_accepted_after_the_end():
    state = play(d2(), *D2_R1, *D2_R2, *D2_R3, *D2_R4, *D2_R5, attack("KC"), TAKE)
    for move in (TAKE, attack("KC"), beat("KC-AC")):
        with pytest.raises(IllegalMove):
            state.play(move)


# --- endless deals -------------------------------------------------------------------

# Three players still in the deal (seat 2 is out), talon empty: each round the attacker
# plays one card and the defender takes it, so one card passes 0 -> 1, 3 -> 0, 1 -> 3.
# Passing KS, QS, AS round the circle returns every hand after nine rounds.
CYCLE = [attack(c) if i % 2 == 0 else TAKE
         for c in ["KS", "QS", "AS", "QS", "AS", "KS", "AS", "KS", "QS"] for i in (0, 1)]


def test_endless_cycle_returns_to_the_same_position():
    start = d4_after_seat2_out()
    state = play(start, *CYCLE)
    assert hands(state) == hands(start)
    assert state.to_move == start.to_move == 0
    assert not state.is_over


def test_endless_fifth_occurrence_of_a_position_draws_the_deal():
    state = d4_after_seat2_out()  # first occurrence of this position
    for _ in range(3):
        state = play(state, *CYCLE)  # second, third, fourth
    assert not state.is_over
    state = play(state, *CYCLE[:-1])
    assert not state.is_over
    state = state.play(CYCLE[-1])  # fifth occurrence
    assert state.is_over
    # Only seat 2 was out when the deal ended.
    assert state.result == {"loser": None, "out_order": [2]}
    assert state.to_move is None


def position_key(state):
    """Return what decides the rest of a deal whose talon is empty (own bookkeeping)."""
    view = state.view(0)
    return (tuple(tuple(h) for h in hands(state)), state.to_move, tuple(sorted(view["table"])),
            tuple(view["in_deal"]))


def test_endless_deal_reaching_one_thousand_moves_is_drawn():
    # Pass single cards round the three seats still in the deal, always choosing the
    # card whose next positions were seen least, so no position occurs five times.
    state = d4_after_seat2_out()
    ply = 6
    seen = {position_key(state): 1}
    while ply < 999:
        assert not state.is_over
        if state.legal_moves()[0]["type"] == "attack":
            options = [state.play(attack(c)) for c in state.view(state.to_move)["hand"]]
            state = min(options, key=lambda s: seen.get(position_key(s), 0))
        else:
            state = state.play(TAKE)
        ply += 1
        key = position_key(state)
        seen[key] = seen.get(key, 0) + 1
        assert seen[key] < 5
    assert ply == 999 and state.view(0)["ply"] == 999
    assert not state.is_over
    assert state.legal_moves() == [TAKE]
    state = state.play(TAKE)  # the 1,000th move
    assert state.is_over
    assert state.result == {"loser": None, "out_order": [2]}
