"""Hand-built Durak decks and deals for the rule tests, and helpers that read a state.

Every expected value of the rule tests is worked out by hand from docs/rules.md, never
read back from the engine. Decks are built explicitly: `build_deck` lays out the hands
each seat should receive, the face-up trump card and the talon order.
"""

from __future__ import annotations

from itertools import combinations, permutations

from cardkit.engine import load_game

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
