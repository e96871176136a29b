"""Where a web process's memory goes, sampled while it serves (off unless asked for).

    MEMWATCH_DIR=/tmp/mem MEMWATCH_EVERY=300 gunicorn -c python:cardserver.gunicorn ...

With ``MEMWATCH_DIR`` set, each gunicorn worker starts ``tracemalloc`` and a daemon
thread that every ``MEMWATCH_EVERY`` seconds (default 300) appends one JSON line to
``<MEMWATCH_DIR>/memwatch-<pid>.jsonl``: the process's RSS, the Python heap that
tracemalloc sees, the source lines whose allocations grew most since the first sample,
and the object types whose count grew most (``gc``). A growth that tracemalloc does not
see (RSS up, traced heap flat) is the C allocator's (fragmentation, arenas), not Python
objects kept alive. For finding a leak in a soak, not for production: tracing costs CPU.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path

TOP = 25
FRAMES = 8


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def type_counts() -> Counter:
    return Counter(type(thing).__qualname__ for thing in gc.get_objects())


class MemoryWatch:
    """Samples of one process's memory, each compared with the first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        tracemalloc.start(FRAMES)
        self.first = tracemalloc.take_snapshot()
        self.first_types = type_counts()
        self.started = time.monotonic()

    def sample(self) -> dict:
        snapshot = tracemalloc.take_snapshot()
        grown = snapshot.compare_to(self.first, "traceback")[:TOP]
        types = type_counts()
        types.subtract(self.first_types)
        traced, _peak = tracemalloc.get_traced_memory()
        record = {
            "seconds": round(time.monotonic() - self.started),
            "rss_kb": rss_kb(),
            "traced_kb": traced // 1024,
            "grown": [
                {
                    "kb": stat.size_diff // 1024,
                    "count": stat.count_diff,
                    "where": [f"{frame.filename}:{frame.lineno}" for frame in stat.traceback],
                }
                for stat in grown
            ],
            "types": types.most_common(TOP),
        }
        with self.path.open("a") as out:
            out.write(json.dumps(record) + "\n")
        return record


def start_from_environment() -> MemoryWatch | None:
    """Start sampling this process if ``MEMWATCH_DIR`` is set; return the watch."""
    folder = os.environ.get("MEMWATCH_DIR")
    if not folder:
        return None
    every = float(os.environ.get("MEMWATCH_EVERY") or 300)
    Path(folder).mkdir(parents=True, exist_ok=True)
    watch = MemoryWatch(Path(folder) / f"memwatch-{os.getpid()}.jsonl")

    def run() -> None:
        while True:
            time.sleep(every)
            watch.sample()

    threading.Thread(target=run, name="memwatch", daemon=True).start()
    return watch
