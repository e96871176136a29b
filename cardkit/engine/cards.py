"""Cards as strings at the boundary, small integers and bitmasks inside.

A card's index is ``suit * 9 + rank`` with ranks ``6 7 8 9 T J Q K A`` (0..8) and suits
``S H D C`` (0..3), so that a hand is an int bitmask and every card of one suit sits in one
contiguous run of nine bits, lowest rank first.  This module is the one place that
converts between the two forms.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable

from .errors import InvalidMove

RANKS = "6789TJQKA"
SUITS = "SHDC"
SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}

CARD_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}


def suit_of(card: int) -> int:
    """Return the suit of a card index (0..3, as in ``SUITS``)."""
    return card // 9


def rank_of(card: int) -> int:
    """Return the rank of a card index (0..8, as in ``RANKS``)."""
    return card % 9


SUIT_MASKS: tuple[int, ...] = tuple(0x1FF << (9 * suit) for suit in range(4))
# HIGHER[card]: the cards of card's suit that rank above it.
HIGHER: tuple[int, ...] = tuple(
    SUIT_MASKS[suit_of(card)] & ~((1 << (card + 1)) - 1) for card in range(36)
)


def deck_cards(deck_size: int) -> list[str]:
    """Return the cards of a 36- or 32-card deck in canonical (suit, rank) order."""
    lowest = 9 - deck_size // 4
    return [r + s for s in SUITS for r in RANKS[lowest:]]


def deck_mask(deck_size: int) -> int:
    return sum(1 << CARD_INDEX[c] for c in deck_cards(deck_size))


def shuffled_deck(seed: int | str, deck_size: int) -> list[str]:
    """Return the deck order that ``seed`` stands for: a seeded shuffle of the canonical deck.

    The seed is hashed with SHA-256 first, so any int or string gives a well-mixed,
    platform-independent order (``random.Random`` is only fed the digest).
    """
    digest = hashlib.sha256(f"cardserver-deck:{seed}".encode()).digest()
    cards = deck_cards(deck_size)
    random.Random(int.from_bytes(digest, "big")).shuffle(cards)
    return cards


def derive_seed(seed: int | str, index: int) -> str:
    """Return the seed of deal ``index`` of a series whose seed is ``seed``."""
    return hashlib.sha256(f"cardserver-series:{seed}:{index}".encode()).hexdigest()


def check_deck(deck: Iterable[str], deck_size: int) -> list[int]:
    """Return the deck as card indices, or raise ValueError unless it is exactly the deck."""
    deck = list(deck)
    expected = deck_cards(deck_size)
    if sorted(deck, key=lambda c: CARD_INDEX.get(c, -1)) != expected:
        unknown = [c for c in deck if c not in expected]
        missing = sorted(set(expected) - set(deck))
        raise ValueError(
            f"the deck must hold each of the {deck_size} cards exactly once"
            + (f"; not in this deck: {unknown}" if unknown else "")
            + (f"; missing: {missing}" if missing else "")
            + ("; some card appears twice" if not unknown and not missing else "")
        )
    return [CARD_INDEX[c] for c in deck]


def parse_card(value: object) -> int:
    """Return the index of a card string such as ``"TS"``; raise InvalidMove otherwise."""
    index = CARD_INDEX.get(value) if isinstance(value, str) else None
    if index is None:
        raise InvalidMove(f"invalid move: {value!r} is not a card (rank 6789TJQKA, suit SHDC)")
    return index


def names(mask: int) -> list[str]:
    """Return the cards of a bitmask as strings, by suit then rank."""
    out = []
    while mask:
        low = mask & -mask
        out.append(CARD_NAMES[low.bit_length() - 1])
        mask ^= low
    return out


def indices(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards: Iterable[str]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << CARD_INDEX[c]
    return mask


def popcount(mask: int) -> int:
    return mask.bit_count()
