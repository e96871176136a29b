"""How often the leaderboard's 95% intervals hold the rating they estimate, by simulation.

    python -m benchmarks.rating_coverage [--players 3,4,5] [--matches 300] [--runs 200]
        [--bootstraps 200] [--luck 0] [--seed 1] [--json out.json]

No database needed. For each table size ``N``, an arena of ``N + 2`` bots 60 Elo apart
plays ``--matches`` matches of ``N`` bots drawn at random; the loser is drawn with
probability proportional to the sum of its pairwise chances of losing
(``cardkit.stats.elo.expected_score``). The leaderboard's fit
(``cardkit.stats.bradley_terry.fit_ratings``, anchored on the weakest bot) reads each
match as pairwise games, which is not how the matches were made, so the rating it
estimates is the fit's limit on endless data: the fit of the exact expected outcome
counts (here, a million matches' worth, no sampling). Over ``--runs`` seeded arenas, the
figure is the share of (run, bot) whose interval holds that limit, for the interval
the leaderboard shows and, apart, for each of its two parts: the bootstrap's
percentiles and the normal interval of the likelihood's curvature.

``--luck S``: the ladder's duplicate tables instead. Each deck favours its seats by
Elo drawn from a normal of standard deviation ``S`` and is dealt in every seat rotation
(``--matches`` counts the deals), the rotations linked in the fit (``groups``, so the
floor is the sandwich variance). The limit then averages the luck out (20,000 decks of
each table, drawn with numpy's seed 0).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.ladder_power import positive
from cardkit.stats.bradley_terry import fit_ratings
from cardkit.stats.elo import expected_score

GAP = 60.0


def loser_chances(strengths: list[float], table: tuple[int, ...]) -> list[float]:
    """Return each seat's chance to lose: proportional to its summed pairwise losses."""
    weights = [
        sum(1.0 - expected_score(strengths[p], strengths[q]) for q in table if q != p)
        for p in table
    ]
    total = sum(weights)
    return [w / total for w in weights]


def lucky_chances(strengths: np.ndarray) -> np.ndarray:
    """``loser_chances`` over the last axis of an array of the seats' strengths."""
    difference = strengths[..., None, :] - strengths[..., :, None]
    lose = 1.0 - 1.0 / (1.0 + 10.0 ** (difference / 400.0))  # [.., p, q]: p loses to q
    weights = lose.sum(axis=-1) - 0.5  # less p against itself
    return weights / weights.sum(axis=-1, keepdims=True)


def limit(strengths: list[float], players: int, luck: float) -> dict[int, float]:
    """Return the fit's ratings on the exact expected counts of endless random tables."""
    tables, losers, counts = [], [], []
    combos = list(itertools.combinations(range(len(strengths)), players))
    rng = np.random.default_rng(0)
    for table in combos:
        for rotation in range(players if luck else 1):
            seated = [table[(s + rotation) % players] for s in range(players)]
            decks = rng.normal(0.0, luck, size=(20_000 if luck else 1, players))
            chances = lucky_chances(np.array([strengths[b] for b in seated]) + decks)
            for seat, chance in enumerate(chances.mean(axis=0)):
                tables.append(seated)
                losers.append(seat)
                counts.append(1e6 * chance / len(combos))
    fit = fit_ratings(tables, losers, anchor=0, anchor_rating=1000.0, bootstraps=0,
                      counts=counts)  # fmt: skip
    return {entry.player: entry.rating for entry in fit}


def arena(strengths: list[float], players: int, matches: int, rng: random.Random, luck: float):
    """Return the tables, losers and groups of ``matches`` random deals (see the module)."""
    tables, losers, groups = [], [], []
    deck = 0
    while len(tables) < matches:
        table = tuple(rng.sample(range(len(strengths)), players))
        seat_luck = [rng.gauss(0.0, luck) for _ in range(players)]
        for rotation in range(players if luck else 1):
            seated = [table[(s + rotation) % players] for s in range(players)]
            lucky = [strengths[b] + seat_luck[s] for s, b in enumerate(seated)]
            chances = loser_chances(lucky, tuple(range(players)))
            tables.append(seated)
            losers.append(rng.choices(range(players), chances)[0])
            groups.append(deck if luck else None)
        deck += 1
    return tables, losers, groups


def coverage(players: int, matches: int, runs: int, bootstraps: int, seed: int,
             luck: float = 0.0) -> dict:
    strengths = [1000.0 + GAP * i for i in range(players + 2)]
    truth = limit(strengths, players, luck)
    held = {"shown": 0, "bootstrap": 0, "curvature": 0}
    widths = {"shown": 0.0, "bootstrap": 0.0, "curvature": 0.0}
    cases = 0
    for run in range(runs):
        rng = random.Random(seed * 1_000_003 + run)
        tables, losers, groups = arena(strengths, players, matches, rng, luck)
        fits = {
            name: {e.player: (e.low, e.high) for e in fit_ratings(
                tables, losers, anchor=0, anchor_rating=1000.0, bootstraps=bootstraps,
                seed=run, interval=kind, groups=groups if luck else None)}
            for name, kind in (("shown", "both"), ("bootstrap", "bootstrap"),
                               ("curvature", "curvature"))
        }  # fmt: skip
        for bot in range(1, len(strengths)):
            cases += 1
            for name, fit in fits.items():
                low, high = fit[bot]
                held[name] += low <= truth[bot] <= high
                widths[name] += high - low
    return {
        "players": players, "bots": players + 2, "matches": matches, "runs": runs,
        "cases": cases, "bootstraps": bootstraps, "luck": luck,
        **{f"{name}_coverage": held[name] / cases for name in held},
        **{f"{name}_mean_width": widths[name] / cases for name in widths},
        "standard_error": math.sqrt(0.95 * 0.05 / cases),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="3,4,5")
    parser.add_argument("--matches", type=positive, default=300)
    parser.add_argument("--runs", type=positive, default=200)
    parser.add_argument("--bootstraps", type=positive, default=200)
    parser.add_argument("--luck", type=float, default=0.0, help="seat luck's sd in Elo")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    rows = []
    print(f"{options.runs} arenas of {options.matches} matches a size, "
          f"{options.bootstraps} bootstraps; the share of 95% intervals holding the limit")
    print("| players | bots | shown | bootstrap | curvature | widths (shown, boot, curv) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for players in (int(p) for p in options.players.split(",")):
        started = time.perf_counter()
        row = coverage(players, options.matches, options.runs, options.bootstraps,
                       options.seed, options.luck)  # fmt: skip
        row["seconds"] = time.perf_counter() - started
        rows.append(row)
        print(f"| {players} | {row['bots']} | {row['shown_coverage']:.3f} "
              f"| {row['bootstrap_coverage']:.3f} | {row['curvature_coverage']:.3f} "
              f"| {row['shown_mean_width']:.0f}, {row['bootstrap_mean_width']:.0f}, "
              f"{row['curvature_mean_width']:.0f} |", flush=True)  # fmt: skip
    print(f"(binomial standard error of a 95% share: about {rows[0]['standard_error']:.3f})")
    harness.write_json(options.json, {"options": vars(options) | {"json": str(options.json)},
                                      "rows": rows}, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
