"""The built-in bots' reply time to a person in the browser while a tournament runs
(issue 38: 20 s for the first three moves on the one Celery queue).

    python -m benchmarks.reply_time [--shape embedded|production] [--matches 60]
        [--persons 2] [--minutes 10] [--port 23200] [--redis-db 3] [--json FILE]
        [--baseline-ref main --rounds 3] [--lock /tmp/bench.lock]

On a fresh arena of the shape (``benchmarks.mixed_load``: ``scripts/run-dev``, or
compose's processes), with the ladder off, a tournament of the three built-in bots of
``--matches`` matches starts and ``--persons`` people play built-ins through the REST API
as the browser's page does (wait for the view, post the first legal move), match after
match, until the tournament ends. Prints the reply time of the built-ins in the people's
matches (from the person's move to the bot's, every bot turn), p50/p95/max in seconds,
the tournament's matches a minute (its matches over the time the load ran), and the
whole report as JSON (``--json``: to a file too). Goal: p95 under 1 s on the 2-core
machine.

``--baseline-ref REF`` runs it ``--rounds`` times for REF's tree and for this one, taking
turns (``benchmarks.baseline``: the same benchmark code on both); ``--lock FILE`` takes
an exclusive lock on FILE for each run alone, so that other benchmarks of a shared
machine run between them, not during them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks import harness
from benchmarks.mixed_load import mixed_load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reply_time", description=__doc__)
    parser.add_argument("--shape", choices=("embedded", "production"), default="embedded")
    parser.add_argument("--matches", type=int, default=60)
    parser.add_argument("--persons", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--port", type=int, default=23200)
    parser.add_argument("--redis-db", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--baseline-ref", help="also run REF's tree, rounds taking turns")
    parser.add_argument("--rounds", type=int, default=3, help="rounds a tree (baseline)")
    parser.add_argument("--lock", type=Path, help="a file locked for each run (baseline)")
    args = parser.parse_args(argv)
    if args.baseline_ref:
        from benchmarks import baseline

        baseline.compare(
            args.baseline_ref, args.rounds, baseline.args_without_baseline(),
            module="benchmarks.reply_time", lock=args.lock,
        )  # fmt: skip
        return 0
    report = mixed_load(
        shape=args.shape, minutes=args.minutes, builtin_matches=args.matches, http_matches=0,
        port=args.port, redis_db=args.redis_db, builtin_tournaments=1, ladder=False,
        client=False, persons=args.persons,
    )  # fmt: skip
    interactive = report["kinds"]["interactive"]
    tournament = report["kinds"]["tournament"]
    report["reply_time"] = interactive["turn_wait"]
    report["tournament_matches_per_min"] = round(
        60 * tournament["finished"] / max(report["load_seconds"], 1.0), 1
    )
    print(json.dumps(report, indent=2))
    harness.write_json(args.json, report)
    print(
        f"{args.shape}: reply time of the built-ins to {args.persons} people over "
        f"{interactive['matches']} matches while {tournament['matches']} tournament matches "
        f"ran ({report['tournament_matches_per_min']} a minute): {report['reply_time']} s",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
