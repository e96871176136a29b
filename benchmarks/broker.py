"""Throughput of the embedded broker: kombu's filesystem transport against the arena's.

    python -m benchmarks.broker [--messages 2000] [--runs 3]

Each run publishes ``--messages`` task-sized messages to a fresh folder and consumes them
all in one process, through kombu's stock transport (``filesystem``) and the arena's
(``cardserver.broker:Transport``, which writes and claims each file by rename), and
prints messages per second (median and range of the runs) for each.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from kombu import Connection

TRANSPORTS = {"stock": "filesystem", "arena": "cardserver.broker:Transport"}
# About the size of a match task's message body.
PAYLOAD = {"task": "tournaments.tasks.play_tournament_match", "args": [123456], "pad": "x" * 400}


def run_once(transport: str, messages: int) -> tuple[float, float]:
    """Return (published/s, consumed/s) of ``messages`` through ``transport``."""
    with tempfile.TemporaryDirectory() as folder:
        options = {
            "data_folder_in": folder,
            "data_folder_out": folder,
            "control_folder": str(Path(folder) / "control"),
        }
        with Connection("filesystem://", transport=transport, transport_options=options) as conn:
            # A new name each run: a transport's state (declared exchanges) outlives the
            # connection, and the folder it declared them in is gone.
            queue = conn.SimpleQueue(f"bench-{uuid.uuid4().hex}")
            started = time.perf_counter()
            for _ in range(messages):
                queue.put(PAYLOAD)
            published = time.perf_counter()
            for _ in range(messages):
                queue.get(timeout=5).ack()
            consumed = time.perf_counter()
            queue.close()
    return messages / (published - started), messages / (consumed - published)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.broker")
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in TRANSPORTS}
    for _ in range(args.runs):  # interleaved, so that a change of load hits both alike
        for name, transport in TRANSPORTS.items():
            results[name].append(run_once(transport, args.messages))
    for name, runs in results.items():
        for index, label in ((0, "publish"), (1, "consume")):
            rates = [run[index] for run in runs]
            print(
                f"{name:6} {label:8} {statistics.median(rates):8.0f} msg/s "
                f"({min(rates):.0f}-{max(rates):.0f}, {len(rates)} runs of {args.messages})"
            )


if __name__ == "__main__":
    main()
