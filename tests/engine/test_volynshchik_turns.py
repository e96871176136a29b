"""Volynshchik's turns: declaring the reserve (rule 3), the first lead (rule 4) and a
turn's cover, take and own move (rule 5).

Every expected value was worked out by hand from docs/rules.md
(tests/engine/volynshchik_deals.py).
"""

from __future__ import annotations

import pytest

from cardkit.engine import load_game
from tests.engine.volynshchik_deals import (
    DECK32,
    FIVE_PILE_BEFORE_REMOVAL,
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

# --------------------------------------------------------------------------- rule 3: declaring


def test_rule3_declare_only_when_unable_to_cover_with_higher_card_of_suit():
    # Seat 1 holds TS JS KS AS above 9S: he must cover, and may not declare.
    state = run(deal(**P2), "lead 9S")
    assert key(mv("declare")) not in legal(state)
    assert_illegal(state, mv("declare"))
    # Facing AH he holds no higher heart: now he may declare.
    state = run(deal(**P2), "lead AH")
    assert key(mv("declare")) in legal(state)


def test_rule3_declare_not_allowed_on_an_empty_table():
    # Declaring needs a card to face; a lead faces none.
    state = deal(**P2)
    assert key(mv("declare")) not in legal(state)
    assert_illegal(state, mv("declare"))


def test_rule3_declare_not_allowed_for_the_own_move_after_covering():
    state = run(deal(**P2), "lead 9S", "cover AS")
    assert state.to_move == 1
    assert key(mv("declare")) not in legal(state)
    assert_illegal(state, mv("declare"))


def test_rule3_declare_only_once_per_deal():
    # Seat 0 faces KD, declares diamonds (AD), takes KD, then faces AS, which he cannot
    # cover with a spade either: he may not declare a second time.
    state = run(deal(**P2), "lead 9S", "cover AS", "lead KD", "declare")
    assert key(mv("declare")) not in legal(state)
    assert_illegal(state, mv("declare"))
    state = run(state, "take")
    assert state.view(0)["pile"] == ["9S", "AS"]
    assert key(mv("declare")) not in legal(state)
    assert_illegal(state, mv("declare"))


def test_rule3_declared_reserve_is_visible_to_all():
    state = run(deal(**P3), "lead AH")
    for seat in range(3):
        assert state.view(seat)["declared"] == [None, None, None]
        assert state.view(seat)["revealed_reserves"] == [None, None, None]
    state = run(state, "declare")
    for seat in range(3):
        assert state.view(seat)["declared"] == [None, "C", None]
        assert state.view(seat)["revealed_reserves"] == [None, "7C", None]
    # It stays face up for the rest of the deal.
    state = run(state, "take", "lead KH")
    for seat in range(3):
        assert state.view(seat)["declared"] == [None, "C", None]
        assert state.view(seat)["revealed_reserves"] == [None, "7C", None]


def test_rule3_declaring_leaves_the_same_player_to_choose_again():
    state = run(deal(**P2), "lead AH", "declare")
    assert state.to_move == 1
    assert state.view(1)["pile"] == ["AH"]
    assert legal(state) == expect("cover 8C", "cover KC", "cover AC", "take")


def test_rule3_players_may_share_the_same_trump_suit():
    # P3 with seat 0's reserve a club too (9C), so seats 0 and 1 both declare clubs.
    layout = dict(P3, hands={**P3["hands"], 0: "7S 9S QS 7H 8H AH 7D 8D AD TC"},
                  reserves={**P3["reserves"], 0: "9C"})
    state = run(deal(**layout), "lead AH", "declare", "take", "lead KH")
    # Seat 0 holds only 7H 8H in hearts: he may declare.
    assert state.to_move == 0
    assert legal(state) == expect("declare", "take")
    state = run(state, "declare")
    assert state.view(2)["declared"] == ["C", "C", None]
    assert state.view(2)["revealed_reserves"] == ["9C", "7C", None]
    assert legal(state) == expect("cover TC", "take")


# --------------------------------------------------------------------------- rule 4: first lead


@pytest.mark.parametrize(("players", "dealer"), [(2, 0), (2, 1), (3, 2), (4, 0), (5, 4), (5, 2)])
def test_rule4_dealers_left_leads_first(players, dealer):
    state = load_game("volynshchik", players=players).deal(deck=list(DECK32), dealer=dealer)
    first = (dealer + 1) % players
    assert state.to_move == first
    assert state.view(first)["pile"] == []
    # Any card of his hand: the first card dealt to him is DECK32[0].
    dealt = DECK32[0::players]
    assert legal(state) == leads(" ".join(dealt[:-1]))


def test_rule4_the_lead_starts_the_pile():
    state = run(deal(**P3), "lead 9S")
    for seat in range(3):
        assert state.view(seat)["pile"] == ["9S"]
    assert state.to_move == 1
    assert hand(state, 0) == set(cards(P3["hands"][0])) - {"9S"}


# --------------------------------------------------------------------------- rule 5: a turn


def test_rule5_empty_table_lead_any_card_from_hand():
    # Seat 1 took the whole pile (AH); seat 2 now leads on an empty table.
    state = run(deal(**P3), "lead AH", "take")
    assert state.to_move == 2
    assert legal(state) == leads(P3["hands"][2])


def test_rule5_must_cover_when_holding_higher_card_of_suit():
    state = run(deal(**P2), "lead 9S")
    assert state.to_move == 1
    assert legal(state) == covers("TS JS KS AS")
    for move in ["take", "declare", "cover 8S", "cover 8C", "cover QS", "lead KS"]:
        assert_illegal(state, mv(move))


def test_rule5_may_cover_with_declared_trump_even_when_holding_higher_card():
    # Seat 1 declared clubs earlier; facing 9S he holds higher spades and clubs.
    state = run(deal(**P2), "lead AH", "declare", "take", "lead 9S")
    assert state.to_move == 1
    assert legal(state) == covers("TS JS KS AS 8C KC AC")
    assert_illegal(state, mv("take"))
    state = run(state, "cover 8C")
    assert state.view(0)["pile"] == ["9S", "8C"]
    assert state.to_move == 1


def test_rule5_top_card_of_own_trump_suit_needs_a_higher_trump():
    # Seat 1's trump is clubs and the top card is 9C: 8C is a trump but does not cover.
    state = run(deal(**P2), "lead AH", "declare", "take", "lead 9C")
    assert legal(state) == covers("KC AC")
    assert_illegal(state, mv("cover 8C"))
    assert_illegal(state, mv("take"))


def test_rule5_unable_to_cover_may_declare_or_take_but_not_cover_without_trump():
    state = run(deal(**P2), "lead AH")
    assert state.to_move == 1
    assert legal(state) == expect("declare", "take")
    assert_illegal(state, mv("cover KH"))
    assert_illegal(state, mv("cover AC"))


def test_rule5_unable_to_cover_after_declaring_may_cover_with_trump_or_take():
    state = run(deal(**P2), "lead AH", "declare")
    assert legal(state) == expect("cover 8C", "cover KC", "cover AC", "take")
    state = run(state, "cover KC")
    assert state.view(0)["pile"] == ["AH", "KC"]
    assert state.to_move == 1
    assert legal(state) == leads("8S TS JS KS AS TH JH QH KH JD QD KD 8C AC")


def test_rule5_declare_allowed_even_when_useless_reserve_of_top_cards_suit():
    # Seat 0 faces KD and his reserve is AD: diamonds become trump, yet KD is a diamond.
    state = run(deal(**P2), "lead 9S", "cover AS", "lead KD")
    assert state.to_move == 0
    assert legal(state) == expect("declare", "take")
    state = run(state, "declare")
    assert state.view(1)["declared"] == ["D", None]
    assert state.to_move == 0
    assert legal(state) == expect("take")


def test_rule5_declare_allowed_even_when_useless_no_card_of_the_suit():
    # Seat 1's reserve is 7C and he holds no club.
    state = run(deal(**P3), "lead AH")
    assert legal(state) == expect("declare", "take")
    state = run(state, "declare")
    assert state.view(0)["declared"] == [None, "C", None]
    assert legal(state) == expect("take")


def test_rule5_take_then_face_new_top_card():
    state = run(deal(**P2), "lead 7S", "cover AS", "lead KD")
    assert state.view(0)["pile"] == ["7S", "AS", "KD"]
    state = run(state, "take")
    # Seat 0 still moves and faces AS: no higher spade, no trump yet.
    assert state.to_move == 0
    assert state.view(0)["pile"] == ["7S", "AS"]
    assert "KD" in hand(state, 0)
    assert legal(state) == expect("declare", "take")
    state = run(state, "take")
    # Now he faces his own 7S, and holds 9S QS and the AS he just took: he must cover.
    assert state.to_move == 0
    assert state.view(1)["pile"] == ["7S"]
    assert state.view(1)["hand_sizes"] == [16, 13]
    assert legal(state) == covers("9S QS AS")


def test_rule5_card_just_taken_may_cover():
    state = run(deal(**P2), "lead 7S", "cover AS", "lead KD", "take", "take", "cover AS")
    assert state.view(0)["pile"] == ["7S", "AS"]
    assert state.to_move == 0
    assert legal(state) == leads("9S QS 7H 8H 9H AH 7D 8D 9D TD 9C TC JC QC KD")


def test_rule5_card_just_taken_may_cover_as_a_trump():
    # Seat 0 declares diamonds, takes KD, and covers AS with that very KD.
    state = run(deal(**P2), "lead 9S", "cover AS", "lead KD", "declare", "take")
    assert legal(state) == covers("7D 8D 9D TD KD") | expect("take")
    state = run(state, "cover KD")
    assert state.view(1)["pile"] == ["9S", "AS", "KD"]
    assert state.to_move == 0
    assert legal(state) == leads("7S QS 7H 8H 9H AH 7D 8D 9D TD 9C TC JC QC")


def test_rule5_taking_last_pile_card_ends_turn_next_player_leads():
    state = run(deal(**P3), "lead AH", "take")
    assert state.view(0)["pile"] == []
    assert state.to_move == 2
    assert hand(state, 1) == set(cards(P3["hands"][1])) | {"AH"}
    assert state.view(2)["hand_sizes"] == [9, 11, 9]


def test_rule5_taking_the_pile_card_by_card_ends_turn_at_the_last_card():
    # Seat 1 covers AH with his trump AC and plays KD; seat 0 takes KD, AC, then AH.
    state = run(deal(**P2), "lead AH", "declare", "cover AC", "lead KD")
    for top in ["KD", "AC", "AH"]:
        assert state.to_move == 0
        assert state.view(0)["pile"][-1] == top
        assert legal(state) == expect("declare", "take")
        state = run(state, "take")
    assert state.view(0)["pile"] == []
    assert state.to_move == 1
    assert hand(state, 0) == set(cards(P2["hands"][0])) | {"KD", "AC"}
    assert legal(state) == leads("8S TS JS KS AS TH JH QH KH JD QD 8C KC")


def test_rule5_own_move_after_cover_is_a_lead_by_the_same_seat():
    state = five_after(4)  # Seat 3 has covered 7S with 8S.
    assert state.to_move == 3
    assert state.view(3)["pile"] == ["7S", "8S"]
    assert legal(state) == leads("7H TH 9D QD")
    for move in ["take", "declare", "cover QD", "lead 8S", "lead KH"]:
        assert_illegal(state, mv(move))
    state = run(state, "lead 7H")
    assert state.view(0)["pile"] == ["7S", "8S", "7H"]
    assert state.to_move == 4


def test_rule5_own_move_with_last_card_next_player_faces_it_on_old_pile():
    state = five_after(22)
    assert state.to_move == 2
    assert legal(state) == leads("JD")
    state = run(state, "lead JD")
    assert state.view(0)["out_order"] == [2]
    assert state.view(0)["hand_sizes"] == [1, 3, 0, 1, 1]
    assert state.view(0)["pile"] == FIVE_PILE_BEFORE_REMOVAL
    assert state.view(0)["removed"] == []
    assert state.to_move == 3
    assert legal(state) == covers("QD")
    assert not state.is_over


def test_rule5_covering_with_last_card_removes_pile_next_player_leads():
    state = five_after(24)
    assert state.view(1)["pile"] == []
    assert sorted(state.view(1)["removed"]) == sorted(FIVE_PILE_BEFORE_REMOVAL + ["QD"])
    assert state.view(1)["out_order"] == [2, 3]
    assert state.view(1)["hand_sizes"] == [1, 3, 0, 0, 1]
    assert state.to_move == 4
    assert legal(state) == leads("JC")


def test_rule5_leading_last_card_on_empty_table_puts_player_out():
    state = five_after(25)
    assert state.view(0)["out_order"] == [2, 3, 4]
    assert state.view(0)["hand_sizes"] == [1, 3, 0, 0, 0]
    # He is out "the same way" as after an own move: the next player faces the card.
    assert state.view(0)["pile"] == ["JC"]
    assert state.to_move == 0
    assert legal(state) == expect("declare", "take")
