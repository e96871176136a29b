"""Volynshchik's rules as data: the phases, ``INFO`` (its moves) and the move keys. The
states are in ``volynshchik``."""

from __future__ import annotations

from .info import GameInfo, MoveType

LEAD, RESPOND = 0, 1
PHASE_NAMES = ("lead", "respond", "over")

INFO = GameInfo(
    name="volynshchik",
    title="Volynshchik (Волынщик)",
    min_players=2,
    max_players=5,
    default_players=3,
    deck_sizes=(32,),
    default_deck_size=32,
    formats=("deal",),
    moves=(
        MoveType(
            type="lead",
            fields=("card",),
            description="Play a card onto an empty table, or one's own move after covering.",
            example={"type": "lead", "card": "QS"},
        ),
        MoveType(
            type="cover",
            fields=("card",),
            description="Cover the top card of the pile.",
            example={"type": "cover", "card": "KS"},
        ),
        MoveType(
            type="take",
            fields=(),
            description="Take the top card of the pile into the hand.",
            example={"type": "take"},
        ),
        MoveType(
            type="declare",
            fields=(),
            description="Turn the reserve card up: its suit becomes this seat's trump.",
            example={"type": "declare"},
        ),
    ),
)
DECK_SIZE = INFO.default_deck_size
# Lead and cover carry one card, take and declare nothing.
CARD_MOVE_KEYS = INFO.move_type("lead").keys
BARE_MOVE_KEYS = INFO.move_type("take").keys
