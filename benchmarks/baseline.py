"""A benchmark of this tree measured against another ref's in the same run.

    python -m benchmarks.bot_calls --matches 200 --window 30 --baseline-ref main --rounds 3

The ref's tree is exported (``git archive``, into a temporary directory: no worktree and
nothing written to the repository) and this tree's ``benchmarks`` package copied over its
own, so both run the same measuring code and differ only in the product's. The rounds
take turns, baseline first (base, this, base, this, ...), each a process of its own
(``python -m benchmarks.bot_calls ... --json``) run from its tree, so that a machine
whose load drifts (others share it) weighs on both alike. With a ``lock`` file, each
process runs holding an exclusive lock on it (as ``flock -x FILE``), so that the other
benchmarks of a shared machine wait for one run only, not for all of them. Reported:
for each figure of each match count, the median and range of each tree's rounds and the
ratio of the medians (this / base), printed and, with ``--json``, written there.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import BASE_DIR, bench_lock


def tree_export(ref: str, into: Path) -> Path:
    """Write ``ref``'s tree to ``into`` with this tree's benchmarks package; return it."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=BASE_DIR, check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryFile() as file:
        file.write(archive)
        file.seek(0)
        with tarfile.open(fileobj=file) as tar:
            tar.extractall(into, filter="data")
    shutil.rmtree(into / "benchmarks")
    shutil.copytree(BASE_DIR / "benchmarks", into / "benchmarks",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return into


def flatten(figures: dict, prefix: str = "") -> dict[str, float]:
    flat = {}
    for name, value in figures.items():
        if isinstance(value, dict):
            flat |= flatten(value, f"{prefix}{name}.")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[f"{prefix}{name}"] = value
    return flat


def compare(
    ref: str, rounds: int, args: list[str], module: str = "benchmarks.bot_calls",
    lock: Path | None = None,
) -> dict:  # fmt: skip
    """Run ``module`` with ``args`` ``rounds`` times in each tree, taking turns (each run
    holding ``lock``, if given); print and return each figure's medians, ranges and
    ratio."""
    out = None
    if "--json" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--json") + 1])
    results: dict[str, list[dict]] = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as folder:
        base = tree_export(ref, Path(folder) / "base")
        for number, (name, tree) in harness.rounds(rounds, (("base", base), ("this", BASE_DIR))):
            figures_file = Path(folder) / f"{name}-{number}.json"
            which = ref if name == "base" else "this tree"
            print(f"round {number + 1}/{rounds}: {name} ({which})", flush=True)
            with bench_lock(lock):
                subprocess.run(
                    [sys.executable, "-m", module, *args, "--json", str(figures_file)],
                    cwd=tree, check=True,
                )  # fmt: skip
            results[name].append(flatten(json.loads(figures_file.read_text())))
    report: dict[str, dict] = {}
    for key in results["this"][0]:
        base_values = [r[key] for r in results["base"] if key in r]
        this_values = [r[key] for r in results["this"] if key in r]
        if not base_values or not this_values:
            continue
        base_median, this_median = statistics.median(base_values), statistics.median(this_values)
        report[key] = {
            "base_median": base_median, "base_range": [min(base_values), max(base_values)],
            "this_median": this_median, "this_range": [min(this_values), max(this_values)],
            "ratio": round(this_median / base_median, 3) if base_median else None,
        }  # fmt: skip
    print(f"\n{rounds} rounds a tree, base = {ref}: median [range] base -> this (ratio)")
    for key, row in report.items():
        print(
            f"  {key}: {row['base_median']:g} {row['base_range']} -> {row['this_median']:g} "
            f"{row['this_range']} ({row['ratio']})"
        )
    harness.write_json(out, {"ref": ref, "rounds": rounds, "figures": report, "raw": results})
    return report



def args_without_baseline() -> list[str]:
    """This command's arguments without those of the baseline (passed to each round)."""
    args, skip = [], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--baseline-ref", "--rounds", "--json", "--lock"):
            skip = "=" not in arg
            continue
        args.append(arg)
    return args
