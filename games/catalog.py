"""What the API tells clients about each game: options, a rules summary, the moves.

The rules themselves are docs/rules.md and docs/rules-decisions.md; this is the
short form a bot author reads first.
"""

from __future__ import annotations

GAMES: list[dict] = [
    {
        "name": "durak",
        "title": "Durak (Дурачки)",
        "players": {"min": 2, "max": 4},
        "deck_sizes": [36, 32],
        "default_deck_size": 36,
        "formats": ["deal", "fool"],
        "rules_summary": (
            "Six cards each; the next card is turned up, its suit is trump, and it lies "
            "under the talon as its last card. The first attacker holds the lowest trump. "
            "Only the attacker and the defender (his left neighbour) play a round: the "
            "attacker plays one card or several of one rank, never more than the defender "
            "holds; the defender beats every attack card at once (higher card of the same "
            "suit, or any trump on a non-trump) or takes them all. The attacker, then a "
            "defender who beat, refill to six from the talon. After a beat the defender "
            "attacks; after a take, the player after him. Once the talon is empty, a player "
            "with no cards is out; the last player holding cards is the fool. Format `fool` "
            "plays deals until one player collects all five letters of ДУРАК (draws carry a "
            "letter over). A position repeated five times, or 1,000 moves, draws the deal."
        ),
        "moves": [
            {
                "type": "attack",
                "description": "Attack with one card or several cards of one rank.",
                "example": {"type": "attack", "cards": ["8C", "8D"]},
            },
            {
                "type": "beat",
                "description": "Cover every attack card: pairs of [attack card, covering card].",
                "example": {"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
            },
            {
                "type": "take",
                "description": "Take every attack card into the hand.",
                "example": {"type": "take"},
            },
        ],
    },
    {
        "name": "volynshchik",
        "title": "Volynshchik (Волынщик)",
        "players": {"min": 2, "max": 5},
        "deck_sizes": [32],
        "default_deck_size": 32,
        "formats": ["deal"],
        "rules_summary": (
            "The whole 32-card deck is dealt; each player's last card is a face-down "
            "reserve. There is no common trump. The dealer's left neighbour leads a card "
            "onto the pile; each next player must cover the top card with a higher card of "
            "its suit if he can, or may cover with his declared trump, declare (turn up his "
            "reserve: its suit becomes his trump, once per deal), or take the top card and "
            "face the next one. After covering he plays one more card of his own (a `lead`), "
            "unless he is out. A player who empties his hand is out; the last player "
            "holding cards loses. A position repeated five times, or 1,000 moves, draws."
        ),
        "moves": [
            {
                "type": "lead",
                "description": "Play a card onto an empty table, or one's own move after covering.",
                "example": {"type": "lead", "card": "QS"},
            },
            {
                "type": "cover",
                "description": "Cover the top card of the pile.",
                "example": {"type": "cover", "card": "KS"},
            },
            {
                "type": "take",
                "description": "Take the top card of the pile into the hand.",
                "example": {"type": "take"},
            },
            {
                "type": "declare",
                "description": "Turn the reserve card up: its suit becomes this seat's trump.",
                "example": {"type": "declare"},
            },
        ],
    },
]
