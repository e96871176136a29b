"""Durak's rules as data and the reading of its moves' form: the constants and ``INFO``,
parsing an attack or a beat (InvalidMove), why a card cannot cover another, and the
enumerations behind the legal moves. The states themselves are in ``durak``."""

from __future__ import annotations

from typing import Any

from .cards import CARD_NAMES, names, parse_card, rank_of, suit_of
from .errors import InvalidMove
from .info import GameInfo, MoveType

ATTACK, DEFEND = 0, 1
PHASE_NAMES = ("attack", "defend", "over")
OPENINGS = ("lowest_trump", "dealer_left")
HAND_SIZE = 6
# SAME_RANK[card]: every card of card's rank (itself included), the cards one attack may hold.
SAME_RANK: tuple[int, ...] = tuple(
    sum(1 << (suit * 9 + rank_of(card)) for suit in range(4)) for card in range(36)
)

INFO = GameInfo(
    name="durak",
    title="Durak (Дурачки)",
    min_players=2,
    max_players=4,
    default_players=2,
    deck_sizes=(36, 32),
    default_deck_size=36,
    formats=("deal", "fool"),
    moves=(
        MoveType(
            type="attack",
            fields=("cards",),
            description="Attack with one card or several cards of one rank.",
            example={"type": "attack", "cards": ["8C", "8D"]},
        ),
        MoveType(
            type="beat",
            fields=("covers",),
            description="Cover every attack card: pairs of [attack card, covering card].",
            example={"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
        ),
        MoveType(
            type="take",
            fields=(),
            description="Take every attack card into the hand.",
            example={"type": "take"},
        ),
    ),
)
ATTACK_KEYS = INFO.move_type("attack").keys
BEAT_KEYS = INFO.move_type("beat").keys
TAKE_KEYS = INFO.move_type("take").keys

# attack_options by (group, limit), filled as DurakState._attacks meets them: few distinct keys.
ATTACK_OPTIONS: dict[tuple[int, int], tuple[tuple[str, ...], ...]] = {}


def attack_options(group: int, limit: int) -> tuple[tuple[str, ...], ...]:
    """Return every non-empty set of the cards in ``group`` (one rank) of at most ``limit``."""
    cards = names(group)
    return tuple(
        tuple(cards[i] for i in range(len(cards)) if subset >> i & 1)
        for subset in range(1, 1 << len(cards))
        if subset.bit_count() <= limit
    )


def cover_assignments(attack: list[int], hand: int, beaters: tuple[int, ...]):
    """Yield every way to cover the attack cards with distinct cards of ``hand``."""
    if not attack:
        yield ()
        return
    first, rest = attack[0], attack[1:]
    options = hand & beaters[first]
    while options:
        low = options & -options
        b = low.bit_length() - 1
        for tail in cover_assignments(rest, hand ^ low, beaters):
            yield (b, *tail)
        options ^= low


def read_attack(cards: Any) -> int:
    """Return the cards of an attack as a mask; raise InvalidMove unless they are a list
    of cards, each listed once."""
    if not isinstance(cards, list):
        raise InvalidMove("invalid move: an attack needs 'cards', a list of cards")
    mask = 0
    for name in cards:
        bit = 1 << parse_card(name)
        if mask & bit:
            raise InvalidMove(f"invalid move: {name} is listed twice")
        mask |= bit
    return mask


def read_covers(covers: Any) -> list[tuple[int, int]]:
    """Return the pairs of a beat; raise InvalidMove unless they are a list of
    [attack card, covering card]."""
    if not isinstance(covers, list):
        raise InvalidMove(
            "invalid move: a beat needs 'covers', a list of [attack card, covering card]"
        )
    pairs = []
    for pair in covers:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InvalidMove("invalid move: each cover is a pair [attack card, covering card]")
        pairs.append((parse_card(pair[0]), parse_card(pair[1])))
    return pairs


def why_not_cover(a: int, b: int, trump: int) -> str:
    a_name, b_name = CARD_NAMES[a], CARD_NAMES[b]
    if suit_of(a) == trump:
        if suit_of(b) == trump:
            return f"{b_name} cannot cover {a_name} (lower trump)"
        return (
            f"{b_name} cannot cover {a_name}: a trump attack card can only be covered by a "
            "higher trump (Durak rule 5)"
        )
    if suit_of(b) == suit_of(a):
        return f"{b_name} cannot cover {a_name} (lower rank, same suit)"
    return f"{b_name} cannot cover {a_name} (other suit, not a trump)"
