"""What the API tells clients about each game: options, a rules summary, the moves.

The rules themselves are docs/rules.md and docs/rules-decisions.md; this is the
short form a bot author reads first. The facts (players, decks, formats, the move
vocabulary) are the engine's ``GameInfo``; only the summaries are written here.
"""

from __future__ import annotations

from cardkit.engine import GAME_CLASSES, GameInfo

RULES_SUMMARIES: dict[str, str] = {
    "durak": (
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
    "volynshchik": (
        "The whole 32-card deck is dealt; each player's last card is a face-down "
        "reserve. There is no common trump. The dealer's left neighbour leads a card "
        "onto the pile; each next player must cover the top card with a higher card of "
        "its suit if he can, or may cover with his declared trump, declare (turn up his "
        "reserve: its suit becomes his trump, once per deal), or take the top card and "
        "face the next one. After covering he plays one more card of his own (a `lead`), "
        "unless he is out. A player who empties his hand is out; the last player "
        "holding cards loses. A position repeated five times, or 1,000 moves, draws."
    ),
}


def _entry(info: GameInfo) -> dict:
    return {
        "name": info.name,
        "title": info.title,
        "players": {"min": info.min_players, "max": info.max_players},
        "deck_sizes": list(info.deck_sizes),
        "default_deck_size": info.default_deck_size,
        "formats": list(info.formats),
        "rules_summary": RULES_SUMMARIES[info.name],
        "moves": [
            {"type": move.type, "description": move.description, "example": move.example}
            for move in info.moves
        ],
    }


# The games as GET /api/v1/games/ lists them (GameSerializer's shape).
GAME_CATALOG: list[dict] = [_entry(game.INFO) for game in GAME_CLASSES.values()]
