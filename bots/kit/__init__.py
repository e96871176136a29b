"""The bot kit: what a bot author needs to answer the arena's HTTP requests.

Write ``choose(view, legal_moves) -> move`` and serve it::

    from bots.kit.server import serve

    serve(choose, port=9001, secret="the bot's secret")

or run a built-in strategy as a sample bot::

    python -m bots.kit.serve --strategy greedy --port 9001 --secret S

(``serve`` the function lives in ``bots.kit.server``: ``bots.kit.serve`` is the command's
module, and the two names would shadow each other here.)

The bot's side (``bots.kit.server``, ``bots.kit.serve``) needs only the standard
library; the client runner (``bots.kit.client``), the local arena (``bots.kit.arena``,
``cardkit play``) and the checker (``bots.kit.check``, ``cardkit check``) use httpx and
rich. Outside this repository, install the kit's own distribution, which brings those two
and the engine but nothing of the server: ``pip install ./kit`` (``kit/pyproject.toml``).
The protocol is described in ``docs/bot-protocol.md``.
"""

from bots.kit.server import BotRequestHandler, BotServer, ReplayGuard, make_server

__all__ = ["BotRequestHandler", "BotServer", "ReplayGuard", "make_server"]
