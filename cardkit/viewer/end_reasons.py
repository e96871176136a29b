"""The words the pages give why a match ended.

The engine's end reasons (``cardkit.engine.EndReason``) are the one list of the ways a deal
ends by the rules; every other ``end_reason`` of a match is the code of a forfeit, a
resignation or a cancellation. The pages' JavaScript gets both from here through
``{% end_reasons_script %}`` (web/templatetags/arena.py) and a standalone replay from
``cardkit.replay``, never from a list of their own.
"""

from __future__ import annotations

from cardkit.engine import EndReason

# What happened, as a clause: "Drawn: the last two went out together".
END_REASON_WORDS: dict[EndReason, str] = {
    EndReason.LOSER: "one seat was left holding cards",
    EndReason.BOTH_OUT: "the last two went out together",
    EndReason.REPETITION: "the same position occurred five times",
    EndReason.MOVE_LIMIT: "the deal reached 1,000 moves",
}

# The codes of matches that did not end by the rules and have words of their own; a
# bot's fault (cardkit.protocol.Fault) is shown as its code, "illegal move".
OTHER_END_WORDS: dict[str, str] = {
    "timeout": "out of time",
    "resign": "resigned",
    "cancelled": "cancelled",
}


def end_reason_words(end_reason: str) -> str:
    """Return ``end_reason`` in words: its own words, or the code with spaces."""
    if end_reason in END_REASON_WORDS:
        return END_REASON_WORDS[EndReason(end_reason)]
    return OTHER_END_WORDS.get(end_reason, end_reason.replace("_", " "))


def end_reasons_for_pages() -> dict:
    """Return what the pages' scripts know of end reasons (``Arena.endedByRules``,
    ``Arena.endReasonWords`` in cardkit/viewer/static/cards.js)."""
    return {
        "by_rules": [reason.value for reason in EndReason],
        "words": {str(reason): words for reason, words in END_REASON_WORDS.items()}
        | OTHER_END_WORDS,
    }
