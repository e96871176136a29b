"""What ``benchmarks.live`` reads of the server besides the play: its memory, when it is
quiet, a plain GET's latency, its garbage collections and the objects it holds."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path

from benchmarks.api import Server
from benchmarks.api_load import StdlibTransport
from benchmarks.machine import cpu_since, pids_rss_mib
from benchmarks.machine import processes_cpu as _process_cpu


def server_rss_mb(port: int) -> float:
    """Resident memory (MB) of every process serving ``port`` (gunicorn and its workers)."""
    return pids_rss_mib(_process_cpu(f"127.0.0.1:{port}"))


def wait_until_quiet(port: int, *, below: float, timeout: float) -> tuple[float, float]:
    """Wait until the server on ``port`` uses under ``below`` cores for a second; return
    (seconds waited, the cores of that last second).

    A stream is answered before its first read (each account stream's active matches,
    each match stream's view, queued in the live reader pool), so the holder sees the
    last streams open while the server may still read for them: that is the cost of
    opening them, not of holding them, and it is kept out of the play measured. On
    2026-12-04 the server was quiet within the first second after 10,000 streams opened.
    """
    started = time.perf_counter()
    while True:
        before = _process_cpu(f"127.0.0.1:{port}")
        time.sleep(1.0)
        cores = cpu_since(before, f"127.0.0.1:{port}")
        waited = time.perf_counter() - started
        if cores < below or waited > timeout:
            return waited, cores


def probe_games(url: str, stop: threading.Event, found: list[float]) -> None:
    """Time ``GET /api/v1/games/`` every 50 ms until ``stop``."""
    http = StdlibTransport(url, "unused")
    http.headers = {}
    while not stop.is_set():
        started = time.perf_counter()
        status, _ = http.request("GET", "/api/v1/games/")
        if status == 200:
            found.append(1000 * (time.perf_counter() - started))
        stop.wait(0.05)
    http.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def gc_totals(server: Server, directory: Path | None) -> dict | None:
    """The server's collections so far, summed over its processes (``--gc-stats``)."""
    if directory is None:
        return None
    pids = set(_process_cpu(f"127.0.0.1:{server.port}"))
    totals = {gen: [0, 0.0, 0.0, 0.0] for gen in "012"}
    for path in directory.glob("gc-*.json"):
        try:
            stats = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if stats["pid"] not in pids:
            continue
        for gen, found in stats["collections"].items():
            total = totals[gen]
            total[0] += found["count"]
            total[1] += found["seconds"]
            total[2] = max(total[2], found["longest"])
            total[3] += found.get("cpu", 0.0)
    return totals


def gc_since(before: dict | None, after: dict | None) -> dict | None:
    """Collections per generation between two ``gc_totals``: count, seconds, longest so far."""
    if before is None or after is None:
        return None
    return {
        gen: {"count": after[gen][0] - before[gen][0],
              "seconds": round(after[gen][1] - before[gen][1], 3),
              "cpu": round(after[gen][3] - before[gen][3], 3),
              "longest_so_far": round(after[gen][2], 3)}
        for gen in after
    }  # fmt: skip


def census(server: Server, directory: Path | None, name: str) -> dict | None:
    """Ask each server process for the commonest types of its tracked objects."""
    if directory is None:
        return None
    pids = set(_process_cpu(f"127.0.0.1:{server.port}"))
    (directory / f"census-{name}").touch()
    found: dict = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for path in directory.glob(f"census-{name}-*.json"):
            pid = int(path.stem.rsplit("-", 1)[1])
            if pid in pids and pid not in found:
                with contextlib.suppress(ValueError):
                    found[pid] = json.loads(path.read_text())
        # The master process does not load the application: only the workers answer.
        if len(found) >= len(pids) - 1:
            break
        time.sleep(0.5)
    return found
