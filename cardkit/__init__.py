"""cardkit: Durak and Volynshchik for bot authors, and the arena's own rules.

One package, the one copy of its code: the arena's server imports it (the engine,
``cardkit.engine``; the built-in players, ``cardkit.players``; the bot protocol and its
caller) as lichess imports scalachess, and bot authors install it alone
(``pip install ./kit``, docs/kit.md). Nothing in it imports Django.

Write ``choose(view, legal_moves) -> move`` and serve it::

    from cardkit.server import serve

    serve(choose, port=9001, secret="the bot's secret")

or run any bot the command takes, a built-in one included, as an HTTP bot::

    cardkit serve greedy --port 9001 --secret S

The bot's side (``cardkit.server``, ``cardkit.serve``) needs only the standard library;
the client runner (``cardkit.client``), the local arena (``cardkit.arena``,
``cardkit play``) and the checker (``cardkit.check``, ``cardkit check``) use httpx and
rich. The protocol is described in ``docs/bot-protocol.md``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# The bot server's names, imported when first asked for: the server and the RL environments
# import cardkit.engine and need no HTTP server.
_SERVER_NAMES = ("BotRequestHandler", "BotServer", "ReplayGuard", "make_server")

__all__ = ["__version__", *_SERVER_NAMES]


def __getattr__(name: str) -> Any:
    if name in _SERVER_NAMES:
        return getattr(importlib.import_module("cardkit.server"), name)
    raise AttributeError(f"module 'cardkit' has no attribute {name!r}")
