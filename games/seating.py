"""Who may hold a seat named in a request: the requester, or a bot that ``bots`` finds.

``games`` does not import ``bots`` (the layer above it), so it cannot look a bot up by
name itself. ``bots`` registers the lookup here in its ``AppConfig.ready()``; the views
that read a seat spec (``{"bot": "<name or id>"}``) ask through ``bot_named``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Return the bot named (or numbered) so, or None when there is none.
BotLookup = Callable[[str], Any]

_bot_lookup: BotLookup | None = None


def bot_lookup_register(lookup: BotLookup) -> None:
    """Make ``lookup`` the way a bot named in a seat spec is found (``bots`` calls it once)."""
    global _bot_lookup
    _bot_lookup = lookup


def bot_named(name_or_id: str) -> Any:
    """Return the bot with this name (or this id, when it is all digits), or None.

    The bot is the ``bots.Bot`` row that ``Seat.bot`` refers to. Raise RuntimeError when no
    app registered a lookup: the ``bots`` app is not installed.
    """
    if _bot_lookup is None:
        raise RuntimeError("no bot lookup registered: is the bots app installed?")
    return _bot_lookup(name_or_id)
