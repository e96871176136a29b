"""The replay viewer, as the site and a standalone replay both use it.

``static/`` holds its script (replay.js), the card drawing (cards.js) and the stylesheet
(arena.css); ``templates/web/`` its markup (the table and controls, the move list, the
suits' symbols). The server serves and includes them from here (its STATICFILES_DIRS and
TEMPLATES' DIRS); ``cardkit.replay`` inlines them into one HTML file. They are package
data of cardkit, so the kit's wheel ships them with no second copy.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent


def asset(name: str) -> str:
    """Return the text of one of the viewer's files: ``static/replay.js``, ``templates/...``."""
    return (FOLDER / name).read_text(encoding="utf-8")
