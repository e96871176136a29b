"""Run every benchmark and write their figures as one Markdown table.

    python -m benchmarks [--only engine,api,tournament,ratings] [--bots] [--quick]
                         [--out artefacts/benchmarks.md]
    python -m benchmarks record NAME [-- ARGS]   # one benchmark's record (benchmarks.results)
    python -m benchmarks report                  # docs/benchmarks.md from the records

Each benchmark runs as its own process (``python -m benchmarks.<name> ... --json``),
prints what it prints alone, and leaves its figures in a JSON file; this command then
writes the table to ``--out`` and prints it. The benchmarks:

- ``engine``: random-vs-random deals per second through the engine, one pinned core.
- ``api``: gunicorn on PostgreSQL (a scratch database) with clients over HTTP: moves per
  second at saturation, move latency (median, 99th percentile) at a steady 100 moves per
  second, and the cost of a move and a view at ply 10 and ply 300 in the service.
- ``tournament``: matches per minute of a tournament of built-in bots on real Celery
  workers (1 and 2 processes) with Redis and PostgreSQL, and in one process.
- ``ratings``: a full ratings recompute (Elo replay and batch fit) of an archive of
  100,000 rated matches on PostgreSQL.
- ``bots`` (only with ``--bots``: it takes about an hour on 2 cores): the built-in
  players against each other, loss rates with 95% intervals and time per decision.

They need PostgreSQL on 127.0.0.1:5432 (user postgres) and Redis on 127.0.0.1:6379, as
CI has; they create and drop their own databases and use a queue of their own on Redis
databases 12 and 14 (``benchmarks.harness``).
``--quick`` runs fewer and shorter repeats (figures for a smoke test, not for quoting).
A machine that is busy with something else gives lower, noisier figures: the table
records the load average at the start and at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import report, results

BASE_DIR = Path(__file__).resolve().parent.parent
BENCHMARKS = ("engine", "api", "tournament", "ratings", "bots")

# Arguments of each benchmark: (full run, quick run).
ARGUMENTS = {
    "engine": (["--seconds", "3", "--repeats", "5"], ["--seconds", "1", "--repeats", "1"]),
    "api": (
        ["--seconds", "20", "--repeats", "3", "--rate", "100"],
        ["--seconds", "5", "--repeats", "1", "--rate", "100"],
    ),
    "tournament": (["--workers", "1,2", "--runs", "3"], ["--workers", "1,2", "--runs", "1",
                                                          "--bots", "4", "--games", "2"]),
    "ratings": (["--matches", "100000", "--runs", "3"], ["--matches", "5000", "--runs", "1"]),
    "bots": (["--deals", "1000"], ["--deals", "20"]),
}


def run_benchmark(name: str, quick: bool, folder: Path) -> tuple[dict | None, float, str]:
    """Run one benchmark; return its figures (None if it failed), seconds taken, error."""
    output = folder / f"{name}.json"
    command = [sys.executable, "-m", f"benchmarks.{name}", *ARGUMENTS[name][quick],
               "--json", str(output)]  # fmt: skip
    print(f"\n=== {' '.join(command[1:])}", flush=True)
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "cardserver.settings"}
    started = time.perf_counter()
    result = subprocess.run(command, cwd=BASE_DIR, env=environment, check=False)
    took = time.perf_counter() - started
    if result.returncode != 0 or not output.exists():
        return None, took, f"exited with status {result.returncode}"
    return json.loads(output.read_text()), took, ""


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def _spread(values: list[float], digits: int = 0) -> str:
    """Return "median (min-max)" of the runs, or the one value."""
    if len(values) == 1:
        return f"{values[0]:,.{digits}f}"
    return (
        f"{_median(values):,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"
    )


def rows_of(name: str, figures: dict) -> list[tuple[str, str, str]]:
    """Return the table rows (figure, value, how measured) of one benchmark's figures."""
    if name == "engine":
        return [
            (
                f"Engine: {row['game']} {row['players']} players, {row['deck_size']} cards",
                f"{row['deals_per_s']:,.0f} deals/s",
                f"random play, {row['moves_per_s']:,.0f} moves/s; "
                f"runs {row['deals_per_s_min']:,.0f}-{row['deals_per_s_max']:,.0f}",
            )
            for row in figures["rows"]
        ]
    if name == "api":
        rows = [
            (
                "API moves/s at saturation (PostgreSQL, gunicorn 2x8 threads)",
                _spread([r["moves_per_s"] for r in figures["throughput"]]),
                "16 clients (http.client), each GET view + POST move in a loop; "
                f"errors {sum(r['errors'] for r in figures['throughput'])}",
            ),
            (
                "API move latency at a steady 100 moves/s, median",
                _spread([r["median_ms"] for r in figures["latency"]], 1) + " ms",
                "open loop, from the scheduled send time (no coordinated omission)",
            ),
            (
                "API move latency at a steady 100 moves/s, 99th percentile",
                _spread([r["p99_ms"] for r in figures["latency"]], 1) + " ms",
                "achieved "
                + _spread([r["achieved_rate"] for r in figures["latency"]])
                + " moves/s",
            ),
        ]
        service = figures.get("service") or {}
        labels = {
            "move": "Cost per move (match_move_submit)",
            "view": "Cost per view (row + snapshot + legal moves)",
            "replay_view": "Cost per view replaying the log (for contrast)",
        }
        for key, costs in service.items():
            label = labels.get(key.removesuffix("_ms"), f"Cost ({key})")
            if isinstance(costs, dict) and costs:
                rows.append(
                    (
                        f"{label}, ply 10 vs ply 300",
                        f"{costs.get('10', float('nan')):.2f} ms vs "
                        f"{costs.get('300', float('nan')):.2f} ms",
                        "median, in process on PostgreSQL, Durak fool series",
                    )
                )
        return rows
    if name == "tournament":
        rows = [
            (
                f"Tournament matches/min, {workers} worker process{'es' if workers != '1' else ''}",
                _spread(figure["runs"]),
                f"{figures['matches']} random-bot Durak matches, Redis + PostgreSQL",
            )
            for workers, figure in figures["workers"].items()
        ]
        if figures.get("inline"):
            rows.append(
                (
                    "Tournament matches/min, one process without Celery",
                    _spread(figures["inline"]["runs"]),
                    "for contrast",
                )
            )
        return rows
    if name == "ratings":
        return [
            (
                f"Rating recompute, {figures['matches']:,} rated matches",
                _spread(figures["total_s"], 2) + " s",
                f"Elo replay {_spread(figures['replay_s'], 2)} s + batch fit "
                f"{_spread(figures['fit_s'], 2)} s ({figures['bootstraps']} bootstraps), "
                f"{figures['database']}",
            )
        ]
    if name == "bots":
        rows = []
        for row in figures["rows"]:
            for player in (row["first"], row["second"]):
                rows.append(
                    (
                        f"Bots: {player} vs {row['second' if player == row['first'] else 'first']}",
                        f"loss rate {row['losses'][player] / row['games']:.1%}",
                        f"{row['games']} games; decision median "
                        f"{row['times'][player]['median_ms'] or 0:.2f} ms, p95 "
                        f"{row['times'][player]['p95_ms'] or 0:.2f} ms",
                    )
                )
        return rows
    raise ValueError(name)


def markdown(rows: list[tuple[str, str, str]], header: list[str]) -> str:
    lines = [*header, "", "| Figure | Value | How |", "| --- | --- | --- |"]
    lines += [f"| {figure} | {value} | {how} |" for figure, value, how in rows]
    return "\n".join(lines) + "\n"


def _commit() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=BASE_DIR, capture_output=True, text=True
    )
    return result.stdout.strip() or "unknown"


def main() -> None:
    if sys.argv[1:2] == ["report"]:
        return report.main(sys.argv[2:])
    if sys.argv[1:2] == ["record"]:
        return results.main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated: " + ", ".join(BENCHMARKS))
    parser.add_argument("--bots", action="store_true", help="also the (slow) bots benchmark")
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke test")
    parser.add_argument("--out", type=Path, default=BASE_DIR / "artefacts" / "benchmarks.md")
    args = parser.parse_args()
    names = [n for n in BENCHMARKS if n != "bots" or args.bots]
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = set(names) - set(BENCHMARKS)
        if unknown:
            parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")

    load_before = os.getloadavg()
    started_at = datetime.now(UTC)
    rows: list[tuple[str, str, str]] = []
    failed = []
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            figures, took, error = run_benchmark(name, args.quick, Path(folder))
            if figures is None:
                failed.append(name)
                rows.append((f"{name} benchmark", "failed", error))
                continue
            rows += rows_of(name, figures)
            print(f"=== {name}: {took:.0f} s", flush=True)
    load_after = os.getloadavg()
    header = [
        "# Benchmarks",
        "",
        f"`python -m benchmarks{' --quick' if args.quick else ''}` at commit {_commit()}, "
        f"{started_at:%Y-%m-%d %H:%M} UTC: Python {platform.python_version()}, "
        f"{os.cpu_count()} cores, load average {load_before[0]:.2f} at the start and "
        f"{load_after[0]:.2f} at the end. Values with a range are the median (min-max) "
        "of the runs.",
    ]
    table = markdown(rows, header)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(table)
    print("\n" + table)
    print(f"Written to {args.out}")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
