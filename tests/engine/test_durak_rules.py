"""Durak rules 1-8 and 10, the endless-deal draw and the move vocabulary, one test per rule.

Every expected value here is worked out by hand from docs/rules.md, never read back
from the engine. Decks are built explicitly: `build_deck` lays out the hands each seat
should receive, the face-up trump card and the talon order.
"""

from __future__ import annotations

from itertools import combinations, permutations

import pytest

from games.engine import IllegalMove, InvalidMove, load_game

RANKS = "6789TJQKA"
SUITS = "SHDC"


# --- helpers -------------------------------------------------------------------------


def full_deck(deck_size: int) -> list[str]:
    ranks = RANKS if deck_size == 36 else RANKS[1:]
    return [r + s for s in SUITS for r in ranks]


def build_deck(hands, trump, talon=(), *, dealer, deck_size=36):
    """Return the deck order that deals `hands[seat]` to each seat.

    Cards go two at a time from the dealer's left neighbour, clockwise, three rounds;
    then comes the face-up `trump`, then the talon from its top (`talon`, followed by
    every unused card in a fixed order).
    """
    n = len(hands)
    assert all(len(hand) == 6 for hand in hands)
    deck = []
    for rnd in range(3):
        for i in range(n):
            seat = (dealer + 1 + i) % n
            deck += hands[seat][2 * rnd:2 * rnd + 2]
    deck.append(trump)
    deck += list(talon)
    deck += [c for c in full_deck(deck_size) if c not in deck]
    assert len(deck) == len(set(deck)) == deck_size
    return deck


def attack(*cards):
    return {"type": "attack", "cards": list(cards)}


def beat(*pairs):
    """Build a beat move from "attack-cover" strings, e.g. beat("7S-8S")."""
    return {"type": "beat", "covers": [p.split("-") for p in pairs]}


TAKE = {"type": "take"}
TAKE_KEY = ("take",)


def norm(move):
    if move["type"] == "attack":
        return ("attack", tuple(sorted(move["cards"])))
    if move["type"] == "beat":
        return ("beat", tuple(sorted(tuple(p) for p in move["covers"])))
    return (move["type"],)


def moveset(moves):
    normed = [norm(m) for m in moves]
    assert len(normed) == len(set(normed)), "a move is listed twice"
    return set(normed)


def play(state, *moves):
    for move in moves:
        state = state.play(move)
    return state


def hand(state, seat):
    return sorted(state.view(seat)["hand"])


def hands(state):
    return [hand(state, seat) for seat in range(len(state.view(0)["hand_sizes"]))]


def expected_attacks(cards, limit):
    """Every non-empty set of one rank from `cards`, at most `limit` cards (rule 4)."""
    moves = set()
    for rank in {c[0] for c in cards}:
        group = sorted(c for c in cards if c[0] == rank)
        for k in range(1, min(len(group), limit) + 1):
            for combo in combinations(group, k):
                moves.add(("attack", tuple(sorted(combo))))
    return moves


def covers(a, b, trump):
    """Return whether card `b` covers card `a` (docs/rules.md, "Cover")."""
    if a[1] == b[1]:
        return RANKS.index(b[0]) > RANKS.index(a[0])
    return b[1] == trump


def expected_beats(attack_cards, cards, trump):
    """Every way to cover each attack card by a distinct card of `cards` (rule 5)."""
    moves = set()
    for chosen in permutations(cards, len(attack_cards)):
        if all(covers(a, b, trump) for a, b in zip(attack_cards, chosen, strict=True)):
            moves.add(("beat", tuple(sorted(zip(attack_cards, chosen, strict=True)))))
    return moves


def snapshot(state):
    seats = len(state.view(0)["hand_sizes"])
    return (
        [state.view(seat) for seat in range(seats)],
        state.to_move,
        moveset(state.legal_moves()),
        state.is_over,
        state.result,
    )


# --- fixed deals ---------------------------------------------------------------------

# D2: 2 players, 32 cards, dealer 1 (seat 0 receives first), trump QC (clubs).
D2_HANDS = [
    ["7S", "7H", "7D", "7C", "TS", "TH"],
    ["8S", "8H", "8D", "8C", "9S", "9H"],
]
D2_TRUMP = "QC"
D2_TALON = ["TD", "TC", "JS", "JH", "9D", "9C", "QS", "QH", "KS", "KH", "KD", "QD",
            "AS", "AH", "AD", "JD", "JC", "AC", "KC"]


def d2():
    deck = build_deck(D2_HANDS, D2_TRUMP, D2_TALON, dealer=1, deck_size=32)
    return load_game("durak", players=2, deck_size=32).deal(
        deck=deck, dealer=1, opening="lowest_trump")


# The D2 line to a drawn deal, round by round (each round worked out in the tests).
D2_R1 = [attack("7S", "7H", "7D", "7C"), beat("7S-8S", "7H-8H", "7D-8D", "7C-8C")]
D2_R2 = [attack("9S", "9H", "9D", "9C"), beat("9S-TS", "9H-TH", "9D-TD", "9C-TC")]
D2_R3 = [attack("JS", "JH"), beat("JS-QS", "JH-QH")]
D2_R4 = [attack("KS", "KH", "KD"), beat("KS-AS", "KH-AH", "KD-AD")]
D2_R5 = [attack("JD", "JC"), beat("JD-QD", "JC-QC")]

# D4: 4 players, 32 cards, dealer 3 (seat 0 receives first), trump AD (diamonds).
D4_HANDS = [
    ["7S", "7H", "7D", "7C", "KS", "KH"],
    ["8S", "8H", "8D", "8C", "9S", "9H"],
    ["TS", "TH", "TD", "JS", "JH", "JD"],
    ["QS", "QH", "QD", "9C", "TC", "JC"],
]
D4_TRUMP = "AD"
D4_TALON = ["KD", "QC", "KC", "AC", "9D", "AS", "AH"]


def d4():
    deck = build_deck(D4_HANDS, D4_TRUMP, D4_TALON, dealer=3, deck_size=32)
    return load_game("durak", players=4, deck_size=32).deal(
        deck=deck, dealer=3, opening="lowest_trump")


D4_R1 = [attack("7S", "7H", "7D", "7C"), beat("7S-8S", "7H-8H", "7D-8D", "7C-8C")]
D4_R2 = [attack("9S", "9H", "9D"), beat("9S-TS", "9H-TH", "9D-TD")]
D4_R3_TAKE = [attack("JS", "JH", "JD"), TAKE]


def d4_after_seat2_out():
    """Seat 2 out (attacked with his last cards, seat 3 took); seat 0 attacks seat 1."""
    return play(d4(), *D4_R1, *D4_R2, *D4_R3_TAKE)


# R2A: 3 players, 36 cards, dealer 0, trump KH (hearts); lowest trump in a hand is 7H.
R2A_HANDS = [
    ["9H", "6S", "7S", "8S", "TS", "JS"],
    ["8H", "AH", "6C", "7C", "8C", "9C"],
    ["7H", "6D", "7D", "8D", "9D", "TD"],
]
R2A_TRUMP = "KH"
R2A_TALON = ["QS", "KS", "AS", "QC", "KC", "AC"]


def r2a(opening="lowest_trump"):
    deck = build_deck(R2A_HANDS, R2A_TRUMP, R2A_TALON, dealer=0)
    return load_game("durak", players=3).deal(deck=deck, dealer=0, opening=opening)


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


# --- rule 5: defence and the cover relation ------------------------------------------


def test_rule5_defender_beats_or_takes_exact_choices():
    # Trump clubs. 7C needs 8C (the only higher trump), so 7D needs 8D;
    # 7S takes 8S or 9S, 7H takes 8H or 9H.
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    expected = {TAKE_KEY}
    for s in ("8S", "9S"):
        for h in ("8H", "9H"):
            expected.add(norm(beat("7S-" + s, "7H-" + h, "7D-8D", "7C-8C")))
    assert moveset(state.legal_moves()) == expected


def test_rule5_no_partial_defence():
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    for move in state.legal_moves():
        if move["type"] == "beat":
            assert sorted(a for a, _ in move["covers"]) == sorted(["7S", "7H", "7D", "7C"])
    for bad in (beat("7S-8S"), beat("7S-8S", "7H-8H", "7D-8D"), beat()):
        with pytest.raises(IllegalMove, match=r"no partial defence.*\(Durak rule 5\)") as raised:
            state.play(bad)
        assert not isinstance(raised.value, InvalidMove)  # well-formed, against a rule


def test_rule5_each_covering_card_covers_exactly_one_attack_card():
    state = play(d4(), *D4_R1, attack("9S", "9H", "9D"))
    # Seat 2 holds TS TH TD JS JH JD, trump diamonds: 9D needs TD or JD, and the other
    # trump may then cover 9S or 9H in place of a card of their own suit.
    assert moveset(state.legal_moves()) == {TAKE_KEY} | expected_beats(
        ["9S", "9H", "9D"], ["TS", "TH", "TD", "JS", "JH", "JD"], "D")
    # Per choice for 9D: 2*2 plain covers, or the spare trump on 9S (2) or on 9H (2).
    assert len(state.legal_moves()) == 1 + 2 * (2 * 2 + 2 + 2)
    for bad in (beat("9S-TD", "9H-TD", "9D-JD"),            # one card covering two
                beat("9S-TS", "9H-TH", "9D-TD", "9D-JD"),   # two cards on one
                beat("9S-TS", "9S-JS", "9H-TH")):           # 9D left uncovered
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule5_trump_attack_card_needs_higher_trump():
    state = d2().play(attack("7C"))  # trump clubs; seat 1 holds 8C and no other club
    assert moveset(state.legal_moves()) == {TAKE_KEY, norm(beat("7C-8C"))}
    for bad in (beat("7C-9S"), beat("7C-8H")):
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule5_lower_trump_cannot_cover_higher_trump():
    # Trump hearts; seat 1 attacks 8H, seat 2 holds only 7H among hearts.
    state = r2a(opening="dealer_left").play(attack("8H"))
    assert state.to_move == 2
    assert moveset(state.legal_moves()) == {TAKE_KEY}
    with pytest.raises(IllegalMove):
        state.play(beat("8H-7H"))


def test_cover_by_higher_card_of_same_suit_or_by_trump():
    state = d2().play(attack("7S"))  # seat 1: 8S 8H 8D 8C 9S 9H, trump clubs
    assert moveset(state.legal_moves()) == {
        TAKE_KEY, norm(beat("7S-8S")), norm(beat("7S-9S")), norm(beat("7S-8C"))}


def test_cover_lower_card_of_same_suit_cannot_cover():
    state = d2().play(attack("TS"))
    assert moveset(state.legal_moves()) == {TAKE_KEY, norm(beat("TS-8C"))}
    with pytest.raises(IllegalMove):
        state.play(beat("TS-9S"))


def test_cover_card_of_another_plain_suit_cannot_cover():
    state = d2().play(attack("TH"))
    assert moveset(state.legal_moves()) == {TAKE_KEY, norm(beat("TH-8C"))}
    for bad in (beat("TH-8S"), beat("TH-9H"), beat("TH-8D")):
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule5_beaten_cards_go_to_the_public_discard():
    state = play(d2(), *D2_R1)
    for seat in (0, 1):
        view = state.view(seat)
        assert view["table"] == []
        assert sorted(view["discard"]) == sorted(["7S", "7H", "7D", "7C", "8S", "8H", "8D", "8C"])


def test_rule5_take_puts_every_attack_card_in_defenders_hand():
    state = play(d2(), attack("7S", "7H"), TAKE)
    assert hand(state, 1) == sorted(["8S", "8H", "8D", "8C", "9S", "9H", "7S", "7H"])
    assert state.view(0)["table"] == []
    assert state.view(0)["discard"] == []


def test_rule5_defender_may_take_when_he_could_beat():
    state = d2().play(attack("7S"))
    moves = moveset(state.legal_moves())
    assert norm(beat("7S-8S")) in moves and TAKE_KEY in moves
    state = state.play(TAKE)
    assert "7S" in hand(state, 1)


# --- rule 6: refill ------------------------------------------------------------------


def test_rule6_attacker_refills_first_defender_only_if_he_beat():
    # Both played four cards: seat 0 (attacker) draws TD TC JS JH, then seat 1 draws
    # the next four, 9D 9C QS QH.
    state = play(d2(), *D2_R1)
    assert hand(state, 0) == sorted(["TS", "TH", "TD", "TC", "JS", "JH"])
    assert hand(state, 1) == sorted(["9S", "9H", "9D", "9C", "QS", "QH"])
    assert state.view(0)["talon_size"] == 20 - 8


def test_rule6_defender_who_took_draws_nothing():
    state = play(d2(), attack("7S"), TAKE)
    assert hand(state, 0) == sorted(["7H", "7D", "7C", "TS", "TH", "TD"])
    assert hand(state, 1) == sorted(["8S", "8H", "8D", "8C", "9S", "9H", "7S"])
    assert state.view(1)["talon_size"] == 19


def test_rule6_player_holding_six_or_more_draws_nothing():
    # Seat 1 takes two cards (8 in hand), then beats one (7 left): he draws nothing,
    # while the attacker draws back up to six.
    state = play(d2(), attack("7S", "7H"), TAKE)
    assert hand(state, 0) == sorted(["7D", "7C", "TS", "TH", "TD", "TC"])
    state = play(state, attack("7D"), beat("7D-8D"))
    assert hand(state, 0) == sorted(["7C", "TS", "TH", "TD", "TC", "JS"])
    assert hand(state, 1) == sorted(["8S", "8H", "8C", "9S", "9H", "7S", "7H"])
    assert state.view(0)["talon_size"] == 20 - 3
    assert state.to_move == 1


def test_rule6_talon_runs_out_during_attackers_refill():
    # Three sevens beaten: seat 0 draws KD QC KC, seat 1 draws AC 9D AS; the talon
    # keeps AH and the trump AD. Then seat 1 plays three nines, seat 2 beats: seat 1
    # draws the last two (AH, then AD) and holds five; seat 2 draws nothing.
    state = play(d4(), attack("7S", "7H", "7D"), beat("7S-8S", "7H-8H", "7D-8D"))
    assert hand(state, 0) == sorted(["7C", "KS", "KH", "KD", "QC", "KC"])
    assert hand(state, 1) == sorted(["8C", "9S", "9H", "AC", "9D", "AS"])
    assert state.view(0)["talon_size"] == 2
    state = play(state, *D4_R2)
    assert hand(state, 1) == sorted(["8C", "AC", "AS", "AH", "AD"])
    assert hand(state, 2) == sorted(["JS", "JH", "JD"])
    assert state.view(0)["talon_size"] == 0
    assert state.view(0)["hand_sizes"] == [6, 5, 3, 6]


def test_rule6_only_attacker_and_defender_draw_attacker_first():
    # Seat 2 attacks 6D, seat 0 beats it with trump 9H: seat 2 draws QS (the talon's
    # top card), then seat 0 draws KS; seat 1 took no part and draws nothing.
    state = play(r2a(), attack("6D"), beat("6D-9H"))
    assert hand(state, 2) == sorted(["7H", "7D", "8D", "9D", "TD", "QS"])
    assert hand(state, 0) == sorted(["6S", "7S", "8S", "TS", "JS", "KS"])
    assert hand(state, 1) == sorted(R2A_HANDS[1])
    assert state.view(1)["talon_size"] == 18 - 2


# --- rule 7: next round --------------------------------------------------------------


def test_rule7_defender_who_beat_attacks_next():
    state = play(d2(), *D2_R1)
    assert state.to_move == 1
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (1, 0)
    state = play(r2a(), attack("6D"), beat("6D-9H"))
    assert state.to_move == 0
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (0, 1)


def test_rule7_after_take_next_clockwise_after_defender_attacks():
    state = play(r2a(), attack("6D"), TAKE)  # seat 2 attacked seat 0, who took
    assert state.to_move == 1
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (1, 2)
    # Seat 2 drew the talon's top card; seat 0 drew nothing.
    assert hand(state, 2) == sorted(["7H", "7D", "8D", "9D", "TD", "QS"])
    assert hand(state, 0) == sorted(R2A_HANDS[0] + ["6D"])
    assert hand(state, 1) == sorted(R2A_HANDS[1])


def test_rule7_after_take_two_players_attacker_attacks_again():
    state = play(d2(), attack("7S"), TAKE)
    assert state.to_move == 0
    assert (state.view(1)["attacker"], state.view(1)["defender"]) == (0, 1)


def test_rule7_after_take_next_attacker_skips_seats_without_cards():
    # Seat 2 is out; seat 1 takes from seat 0, so seat 3 attacks seat 0.
    state = play(d4_after_seat2_out(), attack("KS", "KH", "KD"), TAKE)
    assert hand(state, 1) == sorted(["AS", "AH", "AD", "KS", "KH", "KD"])
    assert state.to_move == 3
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (3, 0)


def test_rule7_beat_with_last_cards_and_out_next_clockwise_in_deal_attacks():
    # Seat 1 beats with his last three cards and is out; seat 2 is already out, so
    # seat 3 attacks, and his left neighbour still in the deal is seat 0.
    state = play(d4_after_seat2_out(), attack("KS", "KH", "KD"), beat("KS-AS", "KH-AH", "KD-AD"))
    view = state.view(0)
    assert view["out_order"] == [2, 1]
    assert view["in_deal"] == [0, 3]
    assert state.to_move == 3
    assert (view["attacker"], view["defender"]) == (3, 0)
    assert not state.is_over


def test_rule7_defender_who_beat_attacks_after_attacker_went_out():
    # Seat 2 attacks with his last cards and seat 3 beats them: seat 2 is out and
    # seat 3 attacks seat 0.
    state = play(d4(), *D4_R1, *D4_R2, attack("JS", "JH", "JD"), beat("JS-QS", "JH-QH", "JD-QD"))
    assert state.view(0)["out_order"] == [2]
    assert state.to_move == 3
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (3, 0)
    assert hand(state, 3) == sorted(["9C", "TC", "JC"])


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
