"""The sequential test's error rates and lengths, by simulation (no database needed).

    python -m benchmarks.sprt [--runs 2000] [--seed 1] [--json out.json]
    python -m benchmarks.sprt --lopsided

For each Elo model and each pair of bounds, it draws pentanomial pair outcomes from a
distribution whose true difference is ``elo0``, then ``elo1`` (``cardkit.stats.sprt``'s
``pairs_with_elo``: an even, lucky pentanomial tilted to that difference), runs
``--runs`` sequential tests checking the LLR after every pair, and prints how often
each accepted H1, the mean and median pairs it took, and the pairs a fixed-size test of
the same error rates needs for that distribution.

``--lopsided`` prints instead the normalised LLR of [0, 20] on a few lopsided count
vectors, exact (``sprt.llr``) and by the closed-form approximation Fishtest calls
``LLR_normalized_alt`` (``sprt.llr_normalized_approximation``), in a second.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from benchmarks import harness
from cardkit.stats import sprt

LOPSIDED = [
    [3, 10, 30, 12, 5], [0, 0, 0, 0, 100], [100, 0, 0, 0, 0], [0, 0, 0, 0, 5],
    [1, 0, 0, 0, 200], [0, 0, 500, 0, 0], [0, 0, 50, 0, 10], [200, 3, 0, 0, 1],
    [0, 0, 100, 5, 0], [40, 0, 0, 0, 60],
]

CASES = [
    ("normalized", 0.0, 10.0),
    ("normalized", 0.0, 20.0),
    ("logistic", 0.0, 20.0),
    ("logistic", 0.0, 40.0),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--lopsided", action="store_true", help="the LLR table only")
    options = parser.parse_args()
    if options.lopsided:
        print("| counts (pairs scoring 0, 0.5, 1, 1.5, 2) | closed form | exact |")
        print("| --- | --- | --- |")
        for counts in LOPSIDED:
            print(f"| {counts} | {sprt.llr_normalized_approximation(counts, 0, 20):.4f} "
                  f"| {sprt.llr(counts, 0, 20):.4f} |")  # fmt: skip
        return
    rows = []
    print(f"{options.runs} runs a case, alpha {options.alpha}, beta {options.beta}")
    print("model       bounds      true  accepts H1  (expected)  mean pairs  median  fixed")
    for model, elo0, elo1 in CASES:
        for true, expected in ((elo0, options.alpha), (elo1, 1 - options.beta)):
            pdf = sprt.pairs_with_elo(true, model=model)
            started = time.perf_counter()
            result = sprt.simulate(
                pdf, elo0, elo1, options.alpha, options.beta, runs=options.runs,
                max_pairs=1_000_000, model=model, seed=options.seed,
            )
            fixed = sprt.fixed_pairs(pdf, elo0, elo1, options.alpha, options.beta, model=model)
            rate = result.accepted_h1 / options.runs
            error = math.sqrt(expected * (1 - expected) / options.runs)
            rows.append({
                "model": model, "elo0": elo0, "elo1": elo1, "true": true,
                "accepted_h1": rate, "expected": expected, "standard_error": error,
                "mean_pairs": result.mean_pairs, "median_pairs": result.median_pairs,
                "fixed_pairs": fixed, "seconds": time.perf_counter() - started,
            })
            print(f"{model:<11} [{elo0:g}, {elo1:g}]{'':<4} {true:>5g}  {rate:>10.3f}"
                  f"  ({expected:.2f}±{error:.3f})  {result.mean_pairs:>10.0f}"
                  f"  {result.median_pairs:>6.0f}  {fixed:>5}")
    harness.write_json(options.json, {"runs": options.runs, "rows": rows}, indent=1)


if __name__ == "__main__":
    main()
