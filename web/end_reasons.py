"""The words the pages give why a match ended: those of the replay viewer, which the kit
ships (cardkit/viewer/end_reasons.py), so that a standalone replay and the site say the same."""

from __future__ import annotations

from cardkit.viewer.end_reasons import (
    END_REASON_WORDS,
    OTHER_END_WORDS,
    end_reason_words,
    end_reasons_for_pages,
)

__all__ = ["END_REASON_WORDS", "OTHER_END_WORDS", "end_reason_words", "end_reasons_for_pages"]
