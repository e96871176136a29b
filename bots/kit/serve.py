"""Run a built-in strategy as an HTTP bot: a working sample for bot authors.

    python -m bots.kit.serve --strategy greedy --port 9001 --secret S

The secret can come from the environment instead: ``ARENA_BOT_SECRET=S``. The bot plays
whichever game each request names, with ``bots.builtin.get_player(strategy, game)``.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import threading

from bots.kit.server import Choose, serve

SECRET_ENV = "ARENA_BOT_SECRET"


def load_strategy(name: str, seed: int | None = None) -> Choose:
    """Return a ``choose(view, legal_moves)`` that plays the built-in strategy ``name``.

    Raise ValueError for a strategy that does not exist. Without ``bots.builtin`` (a kit
    copied alone), only ``random`` is available, played here.
    """
    rng = random.Random(seed)
    try:
        from bots.builtin import get_player
    except ImportError as exc:
        if exc.name != "bots.builtin":
            raise
        if name != "random":
            raise ValueError(
                f"strategy {name!r} needs bots.builtin, which is missing; use --strategy random"
            ) from None
        return lambda view, legal_moves: rng.choice(legal_moves)
    players: dict[str, object] = {}
    lock = threading.Lock()

    def player_for(game: str):
        with lock:
            if game not in players:
                players[game] = get_player(name, game)
            return players[game]

    # Fail now, not at the first request, when the strategy does not exist.
    player_for("durak")

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        return player_for(view["game"]).choose(view, legal_moves, rng)

    return choose


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bots.kit.serve", description="Serve a built-in strategy as an HTTP bot."
    )
    parser.add_argument("--strategy", default="greedy", help="built-in strategy (greedy)")
    parser.add_argument("--port", type=int, default=9001, help="port to listen on (9001)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1; 0.0.0.0 for all)"
    )
    parser.add_argument("--secret", default=os.environ.get(SECRET_ENV), help=f"or ${SECRET_ENV}")
    parser.add_argument("--seed", type=int, help="seed of the strategy's random choices")
    args = parser.parse_args(argv)
    if not args.secret:
        parser.error(f"the bot's secret is required: --secret or ${SECRET_ENV}")
    try:
        choose = load_strategy(args.strategy, args.seed)
    except (KeyError, ValueError) as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger(__name__).info("strategy %s; Ctrl-C stops the bot", args.strategy)
    serve(choose, args.port, args.secret, host=args.host)


if __name__ == "__main__":
    main()
