"""Benchmark records: one benchmark's run as a JSON file that a figure in the docs can cite.

    python -m benchmarks record engine [--results docs/figures] -- --seconds 1 --repeats 3

runs ``python -m benchmarks.engine --seconds 1 --repeats 3 --json ...`` and writes
``docs/figures/engine.json``: the command, the commit, the date, the machine, the
benchmark's own figures as it wrote them, and its ``metrics``, each a named list of the
values of its runs. ``python -m benchmarks report`` turns those records into
``docs/benchmarks.md``; the docs quote figures from there, never from a run of nobody
knows what.

A record's shape (``metrics`` holds either the runs' values, or the median and range the
benchmark computed itself when it keeps no runs)::

    {"benchmark": "engine", "command": "python -m benchmarks.engine --seconds 1",
     "commit": "ffe2918", "date": "2026-12-06T14:30:00Z",
     "machine": {"python": "3.12.3", "system": "Linux x86_64", "cores": 2,
                 "load_start": 1.5, "load_end": 1.7},
     "metrics": [{"name": "Durak 2p 36 cards", "unit": "deals/s", "runs": [1, 2, 3]}],
     "figures": {...}}
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
RESULTS_DIR = BASE_DIR / "docs" / "figures"

Metric = dict  # {"name", "unit", and "runs" or "median"/"min"/"max"}


def _runs(name: str, unit: str, values: list[float]) -> Metric:
    return {"name": name, "unit": unit, "runs": [float(v) for v in values]}


def _spread(name: str, unit: str, spread: dict) -> Metric:
    # A benchmark that kept only its median and range (``_spread`` in benchmarks.kit).
    return {"name": name, "unit": unit, **{k: float(spread[k]) for k in ("median", "min", "max")}}


def _engine(figures: dict) -> list[Metric]:
    metrics = []
    for row in figures["rows"]:
        name = f"{row['game']} {row['players']} players, {row['deck_size']} cards"
        if "deals_per_s_runs" in row:
            metrics.append(_runs(name, "deals/s", row["deals_per_s_runs"]))
        else:
            spread = {"median": row["deals_per_s"], "min": row["deals_per_s_min"],
                      "max": row["deals_per_s_max"]}  # fmt: skip
            metrics.append(_spread(name, "deals/s", spread))
    return metrics


def _api(figures: dict) -> list[Metric]:
    # Each server shape's runs when several took turns (--servers asgi,gthread).
    shapes = figures.get("shapes") or {"": figures}
    metrics = []
    for shape, runs in shapes.items():
        of = f", {shape}" if len(shapes) > 1 else ""
        metrics += [
            _runs(f"moves at saturation{of}", "moves/s",
                  [r["moves_per_s"] for r in runs["throughput"]]),
            _runs(f"server CPU a move at saturation{of}", "ms",
                  [r["cpu_ms_per_move"]["gunicorn"] for r in runs["throughput"]]),
            _runs(f"move latency at 100 moves/s, median{of}", "ms",
                  [r["median_ms"] for r in runs["latency"]]),
            _runs(f"move latency at 100 moves/s, 99th percentile{of}", "ms",
                  [r["p99_ms"] for r in runs["latency"]]),
        ]  # fmt: skip
    return metrics


def _tournament(figures: dict) -> list[Metric]:
    metrics = [
        _runs(f"matches with {workers} worker process(es)", "matches/min", figure["runs"])
        for workers, figure in figures["workers"].items()
    ]
    if figures.get("inline"):
        metrics.append(_runs("matches in one process, no Celery", "matches/min",
                             figures["inline"]["runs"]))  # fmt: skip
    return metrics


def _ratings(figures: dict) -> list[Metric]:
    matches = f"{figures['matches']:,} rated matches"
    return [
        _runs(f"recompute of {matches}", "s", figures["total_s"]),
        _runs(f"Elo replay of {matches}", "s", figures["replay_s"]),
        _runs(f"batch fit of {matches}", "s", figures["fit_s"]),
    ]


def _bots(figures: dict) -> list[Metric]:
    metrics = []
    for row in figures["rows"]:
        for player, other in ((row["first"], row["second"]), (row["second"], row["first"])):
            metrics.append(_runs(f"{player} against {other}, loss rate of {row['games']} games",
                                 "%", [100 * row["losses"][player] / row["games"]]))  # fmt: skip
    return metrics


def _kit(figures: dict) -> list[Metric]:
    metrics = []
    for row in figures["env"]:
        table = f"{row['game']} {row['players']} players, {row['deck_size']} cards"
        metrics.append(_spread(f"RL environment steps, {table}", "steps/s", row["steps_per_s"]))
        metrics.append(_spread(f"engine moves, {table}", "moves/s", row["engine_moves_per_s"]))
    for row in figures["arena"]:
        bots = "-".join(row["bots"])
        metrics.append(_spread(f"local arena deals, {row['game']} {bots}", "deals/s",
                               row["deals_per_s"]))  # fmt: skip
    if "install" in figures:
        metrics.append(_runs("wheel size", "KiB", [figures["install"]["wheel_bytes"] / 1024]))
    return metrics


def _soak(figures: dict) -> list[Metric]:
    """Per kind of process, each process's RSS slope over the soak's second half and its
    RSS at the end (``benchmarks.soak_memory``)."""
    kinds: dict[str, list[dict]] = {}
    for name, process in sorted(figures["rss_per_process"].items()):
        kinds.setdefault(name.rsplit(" ", 1)[0], []).append(process)
    metrics = []
    for kind, processes in kinds.items():
        slopes = [p["second_half_slope_mb_per_h"] for p in processes]
        if None not in slopes:
            metrics.append(_runs(f"{kind} RSS slope, second half, each process", "MB/h", slopes))
        metrics.append(_runs(f"{kind} RSS at the end, each process", "MB",
                             [p["last_mb"] for p in processes]))  # fmt: skip
    return metrics


def _growth(figures: dict) -> list[Metric]:
    # Each route's requests at each size, smallest size first (benchmarks.growth).
    return [
        _runs(f"{name} at {int(size):,} matches", "ms", route["times_ms"])
        for name in next(iter(figures["sizes"].values()))["routes"]
        for size, grown in figures["sizes"].items()
        for route in [grown["routes"].get(name)]
        if route and route.get("times_ms")
    ]


# bot_calls' figures of one match count that a record keeps, with their units.
_BOT_CALLS_UNITS = {
    "turns_per_s": "turns/s", "in_flight_median": "calls", "in_flight_max": "calls",
    "dispatch_ms_p50": "ms", "dispatch_ms_p99": "ms", "cpu_ms_per_turn": "ms CPU a turn",
    "per_turn": "a turn", "forfeits": "matches",
}  # fmt: skip


def _bot_calls_metrics(rounds: list[dict], tree: str) -> list[Metric]:
    # ``rounds``: one flattened figures dict a run ("runs.200.cpu_ms_per_turn.total": 3.5).
    metrics = []
    for key in rounds[0]:
        parts = key.split(".")
        if parts[0] != "runs" or len(parts) < 3 or parts[2] not in _BOT_CALLS_UNITS:
            continue
        values = [r[key] for r in rounds if r.get(key) is not None]
        what = " ".join(parts[3:]).replace("_", " ")
        labels = {"cpu_ms_per_turn": f"CPU a turn, {what}", "per_turn": f"{what} a turn",
                  "forfeits": f"forfeits, {what}"}  # fmt: skip
        label = labels.get(parts[2], parts[2].replace("_", " "))
        name = f"{tree}{parts[1]} matches, {label}"
        if values:
            metrics.append(_runs(name, _BOT_CALLS_UNITS[parts[2]], values))
    return metrics


def _bot_calls(figures: dict) -> list[Metric]:
    from benchmarks.baseline import flatten

    if "raw" not in figures:
        return _bot_calls_metrics([flatten(figures)], "")
    # A run against a baseline (--baseline-ref): each tree's rounds.
    return [
        *_bot_calls_metrics(figures["raw"]["base"], f"{figures['ref']}: "),
        *_bot_calls_metrics(figures["raw"]["this"], "this tree: "),
    ]


def _reply_time(figures: dict) -> list[Metric]:
    # One run's report, or a comparison's (``--baseline-ref``: benchmarks.baseline) whose
    # rounds keep each tree's runs, flattened.
    # The people play without pause, so the quicker the replies, the more bot turns they
    # ask for in the same time: their turns a minute are shown beside the tournament's rate.
    if "raw" in figures:
        trees = {f"{figures['ref']}": figures["raw"]["base"], "this tree": figures["raw"]["this"]}
    else:
        flat = {f"reply_time.{key}": value for key, value in figures["reply_time"].items()}
        flat["tournament_matches_per_min"] = figures["tournament_matches_per_min"]
        flat["load_seconds"] = figures["load_seconds"]
        trees = {"this tree": [flat]}
    metrics = []
    for tree, runs in trees.items():
        for figure in ("p50", "p95", "max"):
            metrics.append(_runs(f"built-ins' reply time to a person, {figure}, {tree}", "s",
                                 [run[f"reply_time.{figure}"] for run in runs]))  # fmt: skip
        metrics.append(_runs(f"the people's bot turns, {tree}", "turns/min",
                             [round(60 * run["reply_time.n"] / run["load_seconds"], 1)
                              for run in runs]))  # fmt: skip
        metrics.append(_runs(f"the tournament meanwhile, {tree}", "matches/min",
                             [run["tournament_matches_per_min"] for run in runs]))  # fmt: skip
    return metrics


def _live(figures: dict) -> list[Metric]:
    """Per number of held streams, each round's figures (a ratio to the same round's
    N = 0); then the wake-up latency of part (b)."""
    held = figures["held"] or []
    base = {row["round"]: row["moves_per_s"] for row in held if row["streams"] == 0}
    metrics = []
    for n in sorted({row["streams"] for row in held}):
        rows = [row for row in held if row["streams"] == n]
        at = f"{n:,} streams"
        metrics.append(_runs(f"moves at {at}", "moves/s", [r["moves_per_s"] for r in rows]))
        if n:
            metrics.append(_runs(f"moves at {at} / at 0, same round", "ratio",
                                 [round(r["moves_per_s"] / base[r["round"]], 3)
                                  for r in rows if base.get(r["round"])]))  # fmt: skip
            metrics.append(_runs(f"streams held of {n:,}", "streams", [r["opened"] for r in rows]))
        metrics.append(_runs(f"GET p99 at {at}", "ms", [r["get_p99_ms"] for r in rows]))
        metrics.append(_runs(f"server CPU a move at {at}", "ms",
                             [r["server_cpu_ms_per_move"] for r in rows]))  # fmt: skip
        metrics.append(_runs(f"server RSS at {at}", "MB", [round(r["rss_mb"]) for r in rows]))
    wake = figures.get("wake")
    if wake and wake["events"]:
        metrics.append(_runs(f"wake-up p99, {wake['streams']:,} streams", "ms", [wake["p99_ms"]]))
        metrics.append(_runs(f"wake-up p50, {wake['streams']:,} streams", "ms", [wake["p50_ms"]]))
    return metrics


# The metrics of each benchmark's --json figures.
EXTRACTORS: dict[str, Callable[[dict], list[Metric]]] = {
    "engine": _engine, "api": _api, "tournament": _tournament, "ratings": _ratings,
    "bots": _bots, "kit": _kit, "growth": _growth, "soak": _soak, "soak_production": _soak,
    "bot_calls": _bot_calls, "reply_time": _reply_time, "live": _live,
}  # fmt: skip

# Benchmarks whose exit status is a verdict on the arena (errors, faults), not a failure
# to measure: their figures are recorded whatever the status, which they carry.
JUDGES = frozenset({"soak", "soak_production"})


def benchmark_of(name: str) -> str:
    """Return the benchmark a record's name names: ``growth-1e6`` is a run of ``growth``
    (a label after the first dash keeps several runs of one benchmark apart)."""
    benchmark = name if name in EXTRACTORS else name.split("-", 1)[0]
    if benchmark not in EXTRACTORS:
        raise SystemExit(f"no record for benchmark {name!r}: one of {', '.join(EXTRACTORS)}"
                         " (or one of them, a dash and a label)")  # fmt: skip
    return benchmark


def commit() -> str:
    """Return the short hash of HEAD, with ``+dirty`` when the tree has changes."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=BASE_DIR, capture_output=True, text=True)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def record(name: str, arguments: list[str], *, results: Path = RESULTS_DIR) -> Path:
    """Run benchmark ``name`` (or ``name`` is the benchmark, a dash and a label) with
    ``arguments`` and write its record to ``NAME.json``; return the file."""
    benchmark = benchmark_of(name)
    shown = " ".join(["python", "-m", f"benchmarks.{benchmark}", *arguments])
    load_start = os.getloadavg()[0]
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "figures.json"
        command = [sys.executable, "-m", f"benchmarks.{benchmark}", *arguments, "--json",
                   str(output)]  # fmt: skip
        done = subprocess.run(command, cwd=BASE_DIR, check=False)
        # A soak that saw a fault still measured its hours: its figures say the status.
        if not output.exists() or (done.returncode != 0 and benchmark not in JUDGES):
            raise SystemExit(f"{shown} exited with status {done.returncode}: nothing recorded")
        figures = json.loads(output.read_text())
    entry = {
        "benchmark": benchmark,
        "command": shown,
        "commit": commit(),
        "date": f"{started:%Y-%m-%dT%H:%M:%SZ}",
        "machine": {
            "python": platform.python_version(),
            "system": f"{platform.system()} {platform.machine()}",
            "cores": os.cpu_count(),
            "load_start": round(load_start, 2),
            "load_end": round(os.getloadavg()[0], 2),
        },
        "metrics": EXTRACTORS[benchmark](figures),
        "figures": figures,
    }
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{name}.json"
    path.write_text(json.dumps(entry, indent=1) + "\n")
    return path


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks record",
        description="Run a benchmark and write its record.",
        epilog="The benchmark's own arguments follow '--'.",
    )
    parser.add_argument("name", help=f"one of {', '.join(sorted(EXTRACTORS))}, or one of "
                        "them, a dash and a label (growth-1e6)")  # fmt: skip
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    arguments = argv[split + 1 :]
    print(f"Written to {record(args.name, arguments, results=args.results)}")
