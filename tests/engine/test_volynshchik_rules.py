"""Volynshchik as docs/rules.md states it, one rule (or sub-rule) per test, on hand-built decks.

Every expected value here was worked out by hand from docs/rules.md ("Common ground",
"Volynshchik", "Move vocabulary"); none is read back from the engine. The fivefold
repetition draw is tested elsewhere.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from games.engine import IllegalMove, load_game

RANKS = "789TJQKA"
SUITS = "SHDC"
DECK32 = [rank + suit for suit in SUITS for rank in RANKS]


# --------------------------------------------------------------------------- helpers


def cards(text: str) -> list[str]:
    return text.split()


def receivers(players: int, dealer: int) -> list[int]:
    """Return the seat that receives each card of the deck, top card first (rule 1)."""
    return [(dealer + 1 + k) % players for k in range(len(DECK32))]


def build_deck(players: int, dealer: int, hands: dict, reserves: dict) -> list[str]:
    """Return the deck order that deals each seat its hand and then its reserve card.

    The reserve is the seat's last dealt card (rule 2), so it goes last in the seat's
    own sequence; the order of the hand cards does not matter.
    """
    per_seat = {seat: cards(hands[seat]) + [reserves[seat]] for seat in range(players)}
    order = receivers(players, dealer)
    wanted = Counter(order)
    for seat in range(players):
        assert len(per_seat[seat]) == wanted[seat], (seat, len(per_seat[seat]), wanted[seat])
    assert sorted(c for seat in per_seat for c in per_seat[seat]) == sorted(DECK32)
    queues = {seat: iter(per_seat[seat]) for seat in per_seat}
    return [next(queues[seat]) for seat in order]


def deal(players: int, dealer: int, hands: dict, reserves: dict):
    game = load_game("volynshchik", players=players)
    return game.deal(deck=build_deck(players, dealer, hands, reserves), dealer=dealer)


def mv(text: str) -> dict:
    """Turn "lead QS", "cover KS", "take" or "declare" into docs/rules.md's JSON move."""
    kind, _, card = text.partition(" ")
    assert kind in {"lead", "cover", "take", "declare"}
    return {"type": kind, "card": card} if card else {"type": kind}


def key(move: dict) -> str:
    return json.dumps(move, sort_keys=True)


def legal(state) -> set[str]:
    moves = state.legal_moves()
    keys = [key(m) for m in moves]
    assert len(keys) == len(set(keys)), "a legal move is listed twice"
    return set(keys)


def expect(*moves: str) -> set[str]:
    return {key(mv(m)) for m in moves}


def leads(hand: str) -> set[str]:
    return expect(*(f"lead {c}" for c in cards(hand)))


def covers(hand: str) -> set[str]:
    return expect(*(f"cover {c}" for c in cards(hand)))


def run(state, *moves: str):
    for move in moves:
        state = state.play(mv(move))
    return state


def hand(state, seat: int) -> set[str]:
    return set(state.view(seat)["hand"])


def snapshot(state) -> tuple:
    """Return everything the public API shows about a state, for unchanged-state checks."""
    players = len(state.view(0)["hand_sizes"])
    return (
        state.to_move,
        state.is_over,
        json.dumps(state.result, sort_keys=True),
        sorted(legal(state)),
        [json.dumps(state.view(seat), sort_keys=True) for seat in range(players)],
    )


def assert_illegal(state, move: dict) -> None:
    before = snapshot(state)
    with pytest.raises(IllegalMove):
        state.play(move)
    assert snapshot(state) == before


# --------------------------------------------------------------------------- layouts

# Two players, dealer 1, so seat 0 leads. Seat 1 holds the top card of every suit but
# hearts (AH is seat 0's) and diamonds (AD is seat 0's reserve).
P2 = dict(
    players=2,
    dealer=1,
    hands={
        0: "7S 9S QS 7H 8H 9H AH 7D 8D 9D TD 9C TC JC QC",
        1: "8S TS JS KS AS TH JH QH KH JD QD KD 8C KC AC",
    },
    reserves={0: "AD", 1: "7C"},
)

# Three players, dealer 2: seats 0 and 1 get 11 cards (10 in hand), seat 2 gets 10.
# Seat 1's reserve is a club and he holds no club.
P3 = dict(
    players=3,
    dealer=2,
    hands={
        0: "7S 9S QS 7H 8H AH 7D 8D 9C TC",
        1: "8S TS KS TH JH JD QD 9D TD KD",
        2: "JS AS 9H QH KH 8C JC KC AC",
    },
    reserves={0: "AD", 1: "7C", 2: "QC"},
)

# Five players, dealer 4: seats 0 and 1 get 7 cards (6 in hand), seats 2-4 get 6.
FIVE = dict(
    players=5,
    dealer=4,
    hands={
        0: "AH 8D 7C TC JS AS",
        1: "8C 9S QS JH KS KD",
        2: "7S TS 9H QH JD",
        3: "8S 7H TH 9D QD",
        4: "8H 7D TD 9C JC",
    },
    reserves={0: "AD", 1: "KC", 2: "QC", 3: "KH", 4: "AC"},
)

# A whole five-player deal, worked out by hand. Comments give the seat to move.
FIVE_SCRIPT = [
    "lead AH",  # 0 leads.
    "take",  # 1 cannot cover AH: takes it, the pile is empty, his turn ends.
    "lead 7S",  # 2 leads on the empty table.
    "cover 8S", "lead 7H",  # 3 covers, then his own move.
    "cover 8H", "lead 7D",  # 4
    "cover 8D", "lead 7C",  # 0
    "cover 8C", "lead 9S",  # 1
    "cover TS", "lead 9H",  # 2
    "cover TH", "lead 9D",  # 3
    "cover TD", "lead 9C",  # 4
    "cover TC", "lead JS",  # 0, one card (AS) left
    "cover QS", "lead JH",  # 1, KS KD AH left
    "cover QH", "lead JD",  # 2: own move with his last card, he is out
    "cover QD",  # 3 covers with his last card: out, the pile is removed
    "lead JC",  # 4 leads his last card on the empty table: out
    "take",  # 0 cannot cover JC: takes it, the pile is empty
    "lead KS",  # 1 leads; seats 2, 3, 4 are out, so 0 is next
    "cover AS", "lead JC",  # 0 covers, then his own move with his last card: out
]

FIVE_PILE_BEFORE_REMOVAL = cards(
    "7S 8S 7H 8H 7D 8D 7C 8C 9S TS 9H TH 9D TD 9C TC JS QS JH QH JD"
)


def five_after(count: int):
    return run(deal(**FIVE), *FIVE_SCRIPT[:count])


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
