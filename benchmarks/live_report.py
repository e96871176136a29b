"""The table ``benchmarks.live`` prints: each N measured, and medians over the rounds."""

from __future__ import annotations

import os
import statistics

from benchmarks import harness


def summary(held: list[dict]) -> list[dict]:
    """Per N: medians over the rounds, and the ratio of moves/s to the same round's N = 0."""
    rows = []
    for n in dict.fromkeys(row["streams"] for row in held):
        mine = [row for row in held if row["streams"] == n]
        ratios = []
        for row in mine:
            base = [b for b in held if b["streams"] == 0 and b["round"] == row["round"]]
            if base and base[0]["moves_per_s"]:
                ratios.append(row["moves_per_s"] / base[0]["moves_per_s"])
        rows.append({
            "streams": n, "rounds": len(mine),
            **{key: (statistics.median(row[key] for row in mine),
                     min(row[key] for row in mine), max(row[key] for row in mine))
               for key in ("moves_per_s", "get_p50_ms", "get_p99_ms",
                           "server_cpu_ms_per_move")},
            "ratio": (statistics.median(ratios), min(ratios), max(ratios)) if ratios else None,
        })  # fmt: skip
    return rows


def report(args, figures: dict, limit: int, load0, load1) -> None:
    held, wake, generator_cpu = figures["held"], figures["wake"], figures["generator_cpu"]
    proxy = ", every client through nginx" if getattr(args, "through_proxy", False) else ""
    if getattr(args, "shape", "bridge") == "split":
        proxy += ", the API on gthread workers beside them (split)"
    print()
    print(
        f"{os.cpu_count()} cores, gunicorn {args.workers} uvicorn workers, PostgreSQL, Redis "
        f"pub/sub; {args.server} server per N, streams held from a {args.holder}{proxy}; "
        f"open-file "
        f"limit {limit}; load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the "
        f"end; load generator CPU {generator_cpu:.0f} s in all"
    )
    if held:
        print(
            "(a) round streams  opened  moves/s  (vs 0)  GET p50 ms  GET p99 ms  KB/stream"
            "  RSS MB  server ms/move  players' cores  holder cores  other cores  gen2 (s)"
        )
        for row in held:
            base = [b for b in held if b["streams"] == 0 and b["round"] == row["round"]]
            ratio = row["moves_per_s"] / base[0]["moves_per_s"] if base else float("nan")
            per = row["kb_per_stream"]
            holder = "-" if row["holder_cores"] is None else f"{row['holder_cores']:.3f}"
            full = row["gc"]["2"] if row["gc"] else None
            gen2 = "-" if full is None else f"{full['count']} ({full['seconds']:.2f})"
            print(
                f"    {row['round']:>5} {row['streams']:>7}  {row['opened']:>6}  "
                f"{row['moves_per_s']:7.1f}  {ratio:6.0%}  {row['get_p50_ms']:10.1f}  "
                f"{row['get_p99_ms']:10.1f}  {per if per is None else round(per, 1)!s:>9}  "
                f"{row['rss_mb']:6.0f}  {row['server_cpu_ms_per_move']:14.2f}  "
                f"{row['generator_cpu']:14.2f}  {holder:>12}  {row['other_cores']:11.2f}  {gen2}"
            )
        if args.rounds > 1:
            print("    medians (min-max) over the rounds:")
            for row in summary(held):
                mps, p50, p99, ms = (
                    row[k]
                    for k in ("moves_per_s", "get_p50_ms", "get_p99_ms", "server_cpu_ms_per_move")
                )
                ratio = row["ratio"]
                print(
                    f"    {row['streams']:>7}: {mps[0]:.0f} moves/s ({mps[1]:.0f}-{mps[2]:.0f}), "
                    f"{ratio[0]:.0%} of N = 0 ({ratio[1]:.0%}-{ratio[2]:.0%}); GET p50 "
                    f"{p50[0]:.1f} ms, p99 {p99[0]:.1f} ms ({p99[1]:.1f}-{p99[2]:.1f}); server "
                    f"{ms[0]:.2f} ms/move ({ms[1]:.2f}-{ms[2]:.2f})"
                )  # fmt: skip
        print("    targets at 10,000: GET p99 < 50 ms, moves/s >= 90% of 0 streams")
        for row in held:
            if row["idle_server_cores"] is not None:
                print(
                    f"    {row['streams']:>7} streams held, no play: the server used "
                    f"{row['idle_server_cores']:.3f} cores ({args.idle_seconds:g} s)"
                )
    if wake:
        print(
            f"(b) {wake['streams']} streams on {args.wake_matches} matches, {wake['moves']} "
            f"moves, {wake['events']} events ({wake['missing_events']} missing): wake-up p50 "
            f"{wake['p50_ms']:.1f} ms, p99 {wake['p99_ms']:.1f} ms, max {wake['max_ms']:.1f} ms"
            "   target p99 < 100 ms"
        )
    harness.write_json(args.json, figures)
