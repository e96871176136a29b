"""A ply's time in the embedded arena (`make run`): an HTTP bot against a built-in one.

    python -m benchmarks.embedded [--matches 4] [--polls 0.25,0.02] [--port 8300]

For each embedded broker polling interval in ``--polls`` (``EMBEDDED_BROKER_POLL``), runs
``scripts/run-dev`` (SQLite, the embedded broker, no ladder) in a fresh folder, registers
one HTTP bot (``cardkit serve``, greedy) through the API, then plays ``--matches``
two-player Durak deals of that bot against the built-in ``greedy``, one after another,
and reports the seconds a ply takes (a match's time from its start to its end over its
plies): median and range over the matches. Each HTTP bot turn crosses the broker to the
``bot-calls`` worker, and each built-in turn after it crosses back to the CPU worker, so
a ply waits for the consumers' polls; the bots themselves answer within milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx

from benchmarks.soak import Soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.embedded", description=__doc__)
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--polls", default="0.25,0.02", help="polling intervals, seconds")
    parser.add_argument("--port", type=int, default=8300, help="web port; the bot the next")
    args = parser.parse_args(argv)
    for poll in args.polls.split(","):
        seconds = ply_seconds(poll=float(poll), matches=args.matches, port=args.port)
        print(
            f"EMBEDDED_BROKER_POLL={poll}: {statistics.median(seconds):.3f} s a ply "
            f"({min(seconds):.3f}-{max(seconds):.3f}) over {len(seconds)} matches",
            flush=True,
        )
    return 0


def ply_seconds(*, poll: float, matches: int, port: int) -> list[float]:
    """Seconds a ply takes in each of ``matches`` deals, on a fresh embedded arena."""
    var_dir = Path(tempfile.mkdtemp(prefix="cardserver-embedded-"))
    arena = Soak(var_dir, port, bots=1, log=var_dir / "soak.log")
    arena.environment.update(RUN_LADDER="0", EMBEDDED_BROKER_POLL=str(poll))
    try:
        arena.manage("migrate", "--noinput")
        arena.start_run_dev()
        arena.register_bots()
        (name, bot), = arena.bots.items()
        with httpx.Client(base_url=arena.api, headers=bot["headers"], timeout=30) as http:
            return [_play(http, name) for _ in range(matches)]
    finally:
        arena.stop()


def _play(http: httpx.Client, bot: str) -> float:
    answer = http.post(
        "/matches/",
        json={"game": "durak", "players": 2, "seats": [{"bot": bot}, {"bot": "greedy"}]},
    )
    answer.raise_for_status()
    match_id = answer.json()["id"]
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        match = http.get(f"/matches/{match_id}/").json()
        if match["status"] not in ("waiting", "active"):
            break
        time.sleep(0.5)
    else:
        raise RuntimeError(f"match {match_id} did not end within 600 s")
    if match["status"] != "finished" or not match["ply"]:
        raise RuntimeError(f"match {match_id} ended {match['status']} after {match['ply']} plies")
    took = _moment(match["finished_at"]) - _moment(match["started_at"])
    return took.total_seconds() / match["ply"]


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


if __name__ == "__main__":
    raise SystemExit(main())
