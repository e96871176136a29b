"""An HTTP bot for ``benchmarks.mixed_load``: the greedy strategy, answering at once or
after thinking a while within its time limit.

    python -m benchmarks.mixed_load_bot --port 23101 --secret S [--think 1-3]
"""

from __future__ import annotations

import argparse
import random
import time

from cardkit.serve import load_strategy
from cardkit.server import serve


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mixed_load_bot")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--think", default="0", help="seconds before each answer: N or LOW-HIGH")
    args = parser.parse_args(argv)
    low, _, high = args.think.partition("-")
    low_s, high_s = float(low), float(high or low)
    greedy = load_strategy("greedy")

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        if high_s:
            time.sleep(random.uniform(low_s, high_s))
        return greedy(view, legal_moves)

    serve(choose, args.port, args.secret)


if __name__ == "__main__":
    main()
