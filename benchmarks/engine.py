"""Random-vs-random deals through the engine's public API, on one core.

    python -m benchmarks.engine [--seconds 3] [--repeats 5]

Each variant plays complete deals (``legal_moves()``, a random choice, ``play()``, until
``is_over``) for ``--seconds`` per repeat and reports the median deals and moves per
second over the repeats, with the spread (min-max) so a noisy machine shows as such.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from pathlib import Path

from benchmarks import harness
from cardkit.engine import load_game

VARIANTS = [
    ("durak", 2, 36), ("durak", 3, 36), ("durak", 4, 36), ("durak", 2, 32),
    ("volynshchik", 2, 32), ("volynshchik", 3, 32), ("volynshchik", 4, 32),
    ("volynshchik", 5, 32),
]


def play_for(
    name: str, players: int, deck_size: int, seconds: float, seed: int
) -> tuple[int, int, float]:
    """Play whole deals for about ``seconds``; return (deals, moves, elapsed)."""
    game = load_game(name, players=players, deck_size=deck_size)
    rng = random.Random(seed)
    choice = rng.choice
    deals = moves = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.deal(seed=rng.getrandbits(64), dealer=deals % players)
        while not state.is_over:
            state = state.play(choice(state.legal_moves()))
            moves += 1
        deals += 1
    return deals, moves, time.perf_counter() - start


def run(seconds: float, repeats: int) -> list[dict]:
    rows = []
    for name, players, deck_size in VARIANTS:
        rates = []
        for repeat in range(repeats):
            deals, moves, elapsed = play_for(name, players, deck_size, seconds, seed=repeat)
            rates.append((deals / elapsed, moves / elapsed))
        deal_rates = [r[0] for r in rates]
        rows.append({
            "game": name, "players": players, "deck_size": deck_size,
            "deals_per_s": statistics.median(deal_rates),
            "deals_per_s_min": min(deal_rates), "deals_per_s_max": max(deal_rates),
            "deals_per_s_runs": deal_rates,
            "moves_per_s": statistics.median(r[1] for r in rates),
        })
    return rows


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per variant and repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    pinned = pin_to_one_core()
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# engine benchmark: {python}, {os.cpu_count()} cores, {pinned}; "
          f"median of {args.repeats} x {args.seconds:g} s")
    header = f"{'game':<12} {'players':>7} {'deck':>4} {'deals/s':>9} {'(min-max)':>15}"
    print(f"{header} {'moves/s':>9}")
    rows = run(args.seconds, args.repeats)
    for row in rows:
        spread = f"{row['deals_per_s_min']:>7.0f}-{row['deals_per_s_max']:<7.0f}"
        print(f"{row['game']:<12} {row['players']:>7} {row['deck_size']:>4} "
              f"{row['deals_per_s']:>9.0f} {spread} {row['moves_per_s']:>9.0f}")
    harness.write_json(args.json, {"pinned": pinned, "rows": rows})


if __name__ == "__main__":
    main()
