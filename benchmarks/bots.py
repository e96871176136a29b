"""Head-to-head matches of the built-in players in 2-player, 36-card Durak.

    python -m benchmarks.bots [--deals 1000] [--budget N] [--processes 2]

Each pairing plays ``--deals`` decks twice, the second time with the seats swapped, so
both players get the same cards from the same seat (2 x deals games per pairing; the
dealer is seat 0 and the first attacker the holder of the lowest trump).  For each player
it prints the loss rate with its 95% Wilson interval, the draw rate, and the median
and 95th percentile of the time per decision where the player had a choice (two legal
moves or more).  Decisions are seeded with ``decision_rng``, so a run replays exactly.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import time
from pathlib import Path

from benchmarks import harness
from cardkit.engine import load_game
from cardkit.players import DEFAULT_BUDGET, decision_rng, get_player
from cardkit.stats.proportions import wilson_interval

PAIRINGS = [("strong", "greedy"), ("greedy", "random"), ("strong", "random")]


def play_deck(task: tuple[str, str, int, int | None]) -> dict:
    """Play deck ``index`` twice, seats swapped; return losses, draws and decision times."""
    first, second, index, budget = task
    game = load_game("durak", players=2, deck_size=36)
    names = (first, second)
    players = {
        name: get_player(name, "durak", budget=budget if name == "strong" else None)
        for name in names
    }
    losses = dict.fromkeys(names, 0)
    times: dict[str, list[float]] = {name: [] for name in names}
    draws = 0
    for swap in (0, 1):
        seating = names[::-1] if swap else names
        state = game.deal(seed=f"bench-bots:{index}", dealer=0)
        match_seed = f"bench-bots:{first}-{second}:{index}:{swap}"
        while not state.is_over:
            seat = state.to_move
            name = seating[seat]
            moves = state.legal_moves()
            view = state.view(seat)
            rng = decision_rng(match_seed, seat, state.ply)
            start = time.perf_counter()
            move = players[name].choose(view, moves, rng)
            if len(moves) > 1:
                times[name].append(time.perf_counter() - start)
            state = state.play(move)
        loser = state.result["loser"]
        if loser is None:
            draws += 1
        else:
            losses[seating[loser]] += 1
    return {"losses": losses, "draws": draws, "times": times}


def run_pairing(
    first: str, second: str, deals: int, budget: int | None, pool
) -> dict:
    tasks = [(first, second, index, budget) for index in range(deals)]
    losses = {first: 0, second: 0}
    times: dict[str, list[float]] = {first: [], second: []}
    draws = 0
    start = time.perf_counter()
    for out in pool.imap_unordered(play_deck, tasks, chunksize=4):
        draws += out["draws"]
        for name in (first, second):
            losses[name] += out["losses"][name]
            times[name].extend(out["times"][name])
    return {
        "first": first, "second": second, "games": 2 * deals, "losses": losses,
        "draws": draws, "times": times, "wall": time.perf_counter() - start,
    }


def report(row: dict) -> None:
    games = row["games"]
    print(f"\n{row['first']} vs {row['second']}: {games} games "
          f"({games // 2} decks x 2 seatings), draws {row['draws'] / games:.1%}, "
          f"wall {row['wall']:.0f} s")
    for name in (row["first"], row["second"]):
        lost = row["losses"][name]
        low, high = wilson_interval(lost, games)
        times = sorted(row["times"][name])
        median = statistics.median(times) * 1000 if times else 0.0
        p95 = times[int(0.95 * (len(times) - 1))] * 1000 if times else 0.0
        print(f"  {name:<7} loss rate {lost / games:6.1%}  95% CI [{low:6.1%}, {high:6.1%}]  "
              f"decision median {median:7.2f} ms  p95 {p95:7.2f} ms  ({len(times)} choices)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000, help="decks per pairing")
    parser.add_argument("--budget", type=int, default=None,
                        help=f"strong's playouts per decision (default {DEFAULT_BUDGET})")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--pairings", default=",".join(f"{a}-{b}" for a, b in PAIRINGS),
                        help="comma-separated, e.g. strong-greedy,greedy-random")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    pairings = [tuple(p.split("-")) for p in args.pairings.split(",")]
    budget = DEFAULT_BUDGET if args.budget is None else args.budget
    print(f"# bots benchmark: 2-player 36-card Durak, {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} cores, {args.processes} processes, "
          f"strong budget {budget} playouts")
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        rows = []
        for first, second in pairings:
            rows.append(run_pairing(first, second, args.deals, args.budget, pool))
            report(rows[-1])
    harness.write_json(args.json, {"budget": budget, "rows": [
        {**row, "times": {name: _time_summary(times) for name, times in row["times"].items()}}
        for row in rows
    ]})  # fmt: skip


def _time_summary(times: list[float]) -> dict:
    """Return the median and 95th percentile of decision times, in milliseconds."""
    ordered = sorted(times)
    if not ordered:
        return {"median_ms": None, "p95_ms": None}
    return {
        "median_ms": 1000 * statistics.median(ordered),
        "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
    }


if __name__ == "__main__":
    main()
