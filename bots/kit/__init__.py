"""The bot kit: what a bot author needs to answer the arena's HTTP requests.

Write ``choose(view, legal_moves) -> move`` and serve it::

    from bots.kit.server import serve

    serve(choose, port=9001, secret="the bot's secret")

or run a built-in strategy as a sample bot::

    python -m bots.kit.serve --strategy greedy --port 9001 --secret S

(``serve`` the function lives in ``bots.kit.server``: ``bots.kit.serve`` is the command's
module, and the two names would shadow each other here.)

The server (``bots.kit.server``, ``bots.kit.serve``) needs only the standard library; the
client (``bots.kit.client``, for a bot that calls the arena's API itself) needs httpx. To
use the kit outside this repository, copy ``bots/__init__.py``, ``bots/protocol.py`` and
``bots/kit/`` keeping that layout. The protocol is described in ``docs/bot-protocol.md``.
"""

from bots.kit.server import BotRequestHandler, BotServer, ReplayGuard, make_server

__all__ = ["BotRequestHandler", "BotServer", "ReplayGuard", "make_server"]
