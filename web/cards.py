"""Cards as people read them: ``"TH"`` is the ten of hearts, drawn ``10♥`` in red.

The JavaScript twin of this module is ``static/web/cards.js``; both draw one card face
with the same markup, so a card looks the same whether the server or a script drew it.
"""

from __future__ import annotations

from django.utils.html import format_html

RANK_LABELS = {"T": "10"}
RANK_NAMES = {
    "6": "six", "7": "seven", "8": "eight", "9": "nine", "T": "ten",
    "J": "jack", "Q": "queen", "K": "king", "A": "ace",
}  # fmt: skip
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
RED_SUITS = frozenset("HD")


def card_label(code: str) -> str:
    """Return the card as short text: ``"TH"`` gives ``"10♥"``."""
    return RANK_LABELS.get(code[0], code[0]) + SUIT_SYMBOLS[code[1]]


def card_name(code: str) -> str:
    """Return the card in words: ``"TH"`` gives ``"ten of hearts"``."""
    return f"{RANK_NAMES[code[0]]} of {SUIT_NAMES[code[1]]}"


def card_html(code: str, *, size: str = "") -> str:
    """Return the markup of one card face (see ``cards.js``, ``cardFace``)."""
    rank, suit = RANK_LABELS.get(code[0], code[0]), code[1]
    colour = "red" if suit in RED_SUITS else "black"
    corner = format_html(
        '<span class="rank">{}</span><svg class="suit"><use href="#suit-{}"></use></svg>',
        rank,
        suit,
    )
    return format_html(
        '<span class="card {} {}" data-card="{}" role="img" aria-label="{}">'
        '<span class="corner tl">{}</span>'
        '<svg class="pip"><use href="#suit-{}"></use></svg>'
        '<span class="corner br">{}</span></span>',
        colour,
        f"card-{size}" if size else "",
        code,
        card_name(code),
        corner,
        suit,
        corner,
    )


def card_back_html(*, size: str = "") -> str:
    return format_html(
        '<span class="card back {}" role="img" aria-label="face-down card"></span>',
        f"card-{size}" if size else "",
    )
