"""The `random` and `greedy` built-in players, and the greedy rules the strong player plays out.

The rules are plain functions of a few facts (the legal moves, the trump, the talon size,
the top card of the pile...) so that both the view-driven player here and the fast
playouts of ``strong`` call the same code: a playout never builds a view.
"""

from __future__ import annotations

import random
from collections.abc import Callable

RANK = {r: i for i, r in enumerate("6789TJQKA")}
KING = RANK["K"]
TEN = RANK["T"]
# A defender who would spend a trump on low cards takes them instead while this many
# cards are left in the talon: early in a deal, trumps are worth more than a card or two.
EARLY_TALON = 12


def _best(moves: list[dict], key: Callable[[dict], tuple], rng: random.Random) -> dict:
    """Return the move with the lowest key; break ties with ``rng``."""
    keys = [key(m) for m in moves]
    low = min(keys)
    ties = [m for m, k in zip(moves, keys, strict=True) if k == low]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


# -- Durak -------------------------------------------------------------------------------


def durak_pick(moves: list[dict], trump: str, talon_size: int, rng: random.Random) -> dict:
    """Return the greedy Durak move among ``moves`` (all attacks, or beats and a take).

    Attack with the lowest rank, avoiding trumps, with every card of that rank that may go;
    beat with the cheapest covers (a trump counts as nine ranks more); take instead when
    the talon still lasts and beating would cost two trumps, a king or ace of trumps, or,
    early in the deal, a trump on low plain cards.
    """
    if moves[0]["type"] == "attack":
        return _best(moves, lambda m: _attack_key(m["cards"], trump), rng)
    beats = [m for m in moves if m["type"] == "beat"]
    take = next(m for m in moves if m["type"] == "take")
    if not beats:
        return take
    best = _best(beats, lambda m: (_cover_cost(m["covers"], trump),), rng)
    if talon_size and _too_costly(best["covers"], trump, talon_size):
        return take
    return best


def durak_order(move: dict, trump: str) -> tuple:
    """Return a sort key that puts the moves the greedy rules like best first."""
    if move["type"] == "attack":
        return _attack_key(move["cards"], trump)
    if move["type"] == "beat":
        return (_cover_cost(move["covers"], trump),)
    return (-1,)  # take


def _attack_key(cards: list[str], trump: str) -> tuple[int, int, int]:
    trumps = 0
    for c in cards:
        if c[1] == trump:
            trumps += 1
    return (trumps, RANK[cards[0][0]], -len(cards))


def _cover_cost(covers: list[list[str]], trump: str) -> int:
    return sum(RANK[b[0]] + (9 if b[1] == trump else 0) for _a, b in covers)


def _too_costly(covers: list[list[str]], trump: str, talon_size: int) -> bool:
    trumps = [b for _a, b in covers if b[1] == trump]
    if not trumps:
        return False
    if len(trumps) >= 2 or RANK[trumps[0][0]] >= KING:
        return True
    return talon_size > EARLY_TALON and all(a[1] != trump and RANK[a[0]] <= TEN for a, _b in covers)


# -- Volynshchik -------------------------------------------------------------------------


def volynshchik_pick(
    moves: list[dict],
    *,
    hand: list[str],
    top: str | None,
    reserve: str,
    trump: str | None,
    rng: random.Random,
) -> dict:
    """Return the greedy Volynshchik move among ``moves``.

    Lead the lowest card of the longest suit (trumps last); cover with the lowest natural
    card, else with the lowest trump; declare only when the reserve's suit would cover the
    top card now; otherwise take.
    """
    kind = moves[0]["type"]
    if kind == "lead":
        counts: dict[str, int] = {}
        for m in moves:
            suit = m["card"][1]
            counts[suit] = counts.get(suit, 0) + 1
        return _best(
            moves,
            lambda m: (m["card"][1] == trump, -counts[m["card"][1]], RANK[m["card"][0]]),
            rng,
        )
    covers = [m for m in moves if m["type"] == "cover"]
    natural = [m for m in covers if m["card"][1] != trump] or covers
    can_take = any(m["type"] == "take" for m in moves)
    if not can_take:
        # He holds a higher card of the top card's suit: cover with the lowest of them.
        return _best(natural, lambda m: (RANK[m["card"][0]],), rng)
    if covers:
        # No natural cover: these are all trumps.
        return _best(covers, lambda m: (RANK[m["card"][0]],), rng)
    declare = next((m for m in moves if m["type"] == "declare"), None)
    if declare is not None and top is not None:
        suit = reserve[1]
        if suit != top[1] and any(c[1] == suit for c in hand):
            return declare
    return next(m for m in moves if m["type"] == "take")


# -- players -----------------------------------------------------------------------------


class RandomPlayer:
    """Play a move drawn uniformly from the legal moves."""

    name = "random"

    def __init__(self, game: str) -> None:
        self.game = game

    def choose(self, view: dict, legal_moves: list[dict], rng: random.Random) -> dict:
        if not legal_moves:
            raise ValueError("no legal move to choose from")
        return rng.choice(legal_moves)


class GreedyPlayer:
    """Play the greedy rules above from the seat's view."""

    name = "greedy"

    def __init__(self, game: str) -> None:
        self.game = game

    def choose(self, view: dict, legal_moves: list[dict], rng: random.Random) -> dict:
        if not legal_moves:
            raise ValueError("no legal move to choose from")
        if len(legal_moves) == 1:
            return legal_moves[0]
        return greedy_choice(view, legal_moves, rng)


class SloppyGreedyPlayer(GreedyPlayer):
    """The greedy player, weakened: one move in ten (``random_share``) is drawn uniformly
    from the legal moves instead. A known-worse player, for checking that a sequential
    test rejects it; the arena registers no bot of it by default."""

    name = "sloppy"
    random_share = 0.1

    def choose(self, view: dict, legal_moves: list[dict], rng: random.Random) -> dict:
        if legal_moves and rng.random() < self.random_share:
            return rng.choice(legal_moves)
        return super().choose(view, legal_moves, rng)


def greedy_choice(view: dict, legal_moves: list[dict], rng: random.Random) -> dict:
    """Return the greedy move for the seat whose ``view`` this is."""
    if view["game"] == "durak":
        return durak_pick(legal_moves, view["trump_suit"], view["talon_size"], rng)
    pile = view["pile"]
    return volynshchik_pick(
        legal_moves,
        hand=view["hand"],
        top=pile[-1] if pile else None,
        reserve=view["reserve"],
        trump=view["declared"][view["seat"]],
        rng=rng,
    )
