"""Hand-built Volynshchik decks and layouts for the rule tests, and helpers that read a
state.

Every expected value of the rule tests was worked out by hand from docs/rules.md
("Common ground", "Volynshchik", "Move vocabulary"); none is read back from the engine.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from cardkit.engine import IllegalMove, load_game

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
