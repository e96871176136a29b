"""Fixed integer actions and numpy observations for Durak and Volynshchik (docs/rl-encoding.md).

A codec turns a rules move into ids of a fixed action space whose size depends only on
the options, with a mask of the ids legal now, and a seat's ``view`` into a numpy vector
with the seats counted from the observer. A Durak defence (a cover for every attack card)
is factored into one step per attack card, so the space stays small: the defender picks a
cover for the first uncovered card of the table (in the view's order), then the next; the
mask offers only the covers that some legal ``beat`` completes, and the last step plays
exactly that legal move. ``take`` stays open at every step.

Everything here reads the engine's ``legal_moves`` and the seat's ``view`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from cardkit.engine.cards import RANKS, SUITS, deck_cards

SUBSETS = 15  # the non-empty sets of the four suits, an attack of one rank


class _Codec:
    card_id: dict[str, int]
    observation_size: int

    def _canvas(self) -> tuple[np.ndarray, Callable[[int, Iterable[str]], None]]:
        """Return a zero observation and ``cards(offset, names)``, which sets the bits of
        ``names`` in the card block starting at ``offset``."""
        out = np.zeros(self.observation_size, dtype=np.float32)
        ids = self.card_id

        def cards(offset: int, names: Iterable[str]) -> None:
            for card in names:
                out[offset + ids[card]] = 1.0

        return out, cards


class DurakCodec(_Codec):
    """Actions: ``attack`` (rank, suits) ids, ``cover with card c`` ids, then ``take``."""

    game = "durak"

    def __init__(self, players: int, deck_size: int = 36) -> None:
        self.players = players
        self.deck_size = deck_size
        self.cards = deck_cards(deck_size)
        self.card_id = {card: i for i, card in enumerate(self.cards)}
        self.ranks = RANKS[9 - deck_size // 4:]
        self.attacks = len(self.ranks) * SUBSETS
        self.cover_base = self.attacks
        self.take = self.attacks + deck_size
        self.size = self.take + 1
        d, n = deck_size, players
        # hand, table, covers chosen, card to cover, discard, trump card, known cards of
        # every seat; trump suit, phase; per seat: hand size, attacker, defender, in the deal;
        # the talon's size.
        self.observation_size = 6 * d + n * d + 4 + 2 + 4 * n + 1

    # -- actions ----------------------------------------------------------------------

    def attack_id(self, cards: list[str]) -> int:
        rank = self.ranks.index(cards[0][0])
        suits = sum(1 << SUITS.index(card[1]) for card in cards)
        return rank * SUBSETS + suits - 1

    def describe(self, action: int) -> str:
        if action < self.attacks:
            rank, suits = divmod(action, SUBSETS)
            return "attack " + " ".join(
                self.ranks[rank] + s for i, s in enumerate(SUITS) if (suits + 1) >> i & 1
            )
        if action < self.take:
            return "cover with " + self.cards[action - self.cover_base]
        return "take"

    def options(self, legal: list[dict], pending: tuple[str, ...]) -> dict:
        """Return ``{action id: rules move, or None for a further cover step}``.

        ``pending`` holds the covers chosen so far, for the table's first attack cards in
        the engine's order (the order of the view's ``table`` and of every ``beat``).
        """
        if not legal:
            return {}
        if legal[0]["type"] == "attack":
            return {self.attack_id(move["cards"]): move for move in legal}
        step = len(pending)
        found: dict[int, dict | None] = {}
        for move in legal:
            if move["type"] == "take":
                found[self.take] = move
                continue
            covers = move["covers"]
            if any(covers[k][1] != pending[k] for k in range(step)):
                continue
            action = self.cover_base + self.card_id[covers[step][1]]
            found[action] = move if step == len(covers) - 1 else None
        return found

    # -- observations -----------------------------------------------------------------

    def observe(self, view: dict, pending: tuple[str, ...]) -> np.ndarray:
        """Return the vector of ``view`` (a seat's), seats counted from that seat."""
        d, n = self.deck_size, self.players
        me = view["seat"]
        out, cards = self._canvas()
        cards(0, view.get("hand", ()))
        cards(d, view["table"])
        cards(2 * d, pending)
        table = view["table"]
        if view["phase"] == "defend" and len(pending) < len(table) and view["to_move"] == me:
            cards(3 * d, [table[len(pending)]])
        cards(4 * d, view["discard"])
        cards(5 * d, [view["trump_card"]])
        base = 6 * d
        for seat, known in enumerate(view["known_cards"]):
            cards(base + ((seat - me) % n) * d, known)
        base += n * d
        out[base + SUITS.index(view["trump_suit"])] = 1.0
        base += 4
        if view["phase"] in ("attack", "defend"):
            out[base + ("attack", "defend").index(view["phase"])] = 1.0
        base += 2
        in_deal = set(view["in_deal"])
        for seat in range(n):
            rel = (seat - me) % n
            out[base + rel] = view["hand_sizes"][seat] / d
            out[base + n + rel] = float(view["attacker"] == seat)
            out[base + 2 * n + rel] = float(view["defender"] == seat)
            out[base + 3 * n + rel] = float(seat in in_deal)
        out[base + 4 * n] = view["talon_size"] / d
        return out


class VolynshchikCodec(_Codec):
    """Actions: ``lead`` card ids, ``cover`` card ids, ``take``, ``declare``."""

    game = "volynshchik"

    def __init__(self, players: int, deck_size: int = 32) -> None:
        self.players = players
        self.deck_size = 32
        self.cards = deck_cards(32)
        self.card_id = {card: i for i, card in enumerate(self.cards)}
        self.cover_base = 32
        self.take = 64
        self.declare = 65
        self.size = 66
        d, n = 32, players
        # hand, own reserve, pile, top of the pile, removed; per seat: known cards and a
        # revealed reserve; phase; per seat: hand size, declared, in the deal.
        self.observation_size = 5 * d + 2 * n * d + 2 + 3 * n

    def describe(self, action: int) -> str:
        if action < 32:
            return "lead " + self.cards[action]
        if action < 64:
            return "cover with " + self.cards[action - 32]
        return "take" if action == self.take else "declare"

    def options(self, legal: list[dict], pending: tuple[str, ...]) -> dict:
        found = {}
        for move in legal:
            kind = move["type"]
            if kind == "lead":
                found[self.card_id[move["card"]]] = move
            elif kind == "cover":
                found[self.cover_base + self.card_id[move["card"]]] = move
            else:
                found[self.take if kind == "take" else self.declare] = move
        return found

    def observe(self, view: dict, pending: tuple[str, ...]) -> np.ndarray:
        d, n = 32, self.players
        me = view["seat"]
        out, cards = self._canvas()
        cards(0, view.get("hand", ()))
        if view.get("reserve"):
            cards(d, [view["reserve"]])
        cards(2 * d, view["pile"])
        if view["pile"]:
            cards(3 * d, [view["pile"][-1]])
        cards(4 * d, view["removed"])
        base = 5 * d
        for seat in range(n):
            rel = (seat - me) % n
            cards(base + rel * d, view["known_cards"][seat])
            reserve = view["revealed_reserves"][seat]
            if reserve:
                cards(base + (n + rel) * d, [reserve])
        base += 2 * n * d
        if view["phase"] in ("lead", "respond"):
            out[base + ("lead", "respond").index(view["phase"])] = 1.0
        base += 2
        in_deal = set(view["in_deal"])
        for seat in range(n):
            rel = (seat - me) % n
            out[base + rel] = view["hand_sizes"][seat] / d
            out[base + n + rel] = float(view["declared"][seat] is not None)
            out[base + 2 * n + rel] = float(seat in in_deal)
        return out


def codec_for(game: str, players: int, deck_size: int | None = None):
    """Return the codec of ``game`` at a table of ``players`` (and ``deck_size``)."""
    if game == "durak":
        return DurakCodec(players, 36 if deck_size is None else deck_size)
    if game == "volynshchik":
        return VolynshchikCodec(players)
    raise ValueError(f"unknown game {game!r}; the games are durak, volynshchik")
