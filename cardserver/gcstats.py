"""A debugging aid, off by default: what the garbage collector does in a web process.

With ``CARDSERVER_GC_STATS`` set to a directory, each process that loads
``cardserver.asgi`` counts its collections with ``gc.callbacks`` (per generation: how
many, their total and longest pause, their CPU) and writes them, once a second, to
``<dir>/gc-<pid>.json``. A file ``<dir>/census-<name>`` makes each process write the 40
most common types of the objects the collector tracks to
``<dir>/census-<name>-<pid>.json`` (once per name), with the lines that allocated the
most memory if ``tracemalloc`` traces (``PYTHONTRACEMALLOC=1``). A name starting
``collect`` runs a full collection first; one starting ``garbage`` runs it keeping what
it frees, and adds the types of those objects (``garbage``): the reference cycles that
only a full collection frees, which hold memory until the next one. ``benchmarks.live
--gc-stats`` reads them: its figures then show what held streams cost the collector.
"""

from __future__ import annotations

import collections
import gc
import json
import os
import threading
import time
import tracemalloc
from pathlib import Path

_started: dict[int, tuple[float, float]] = {}
_totals = {gen: {"count": 0, "seconds": 0.0, "cpu": 0.0, "longest": 0.0} for gen in range(3)}


def _on_collection(phase: str, info: dict) -> None:
    generation = info["generation"]
    if phase == "start":
        _started[generation] = (time.perf_counter(), time.thread_time())
        return
    began = _started.pop(generation, None)
    if began is None:
        return
    took = time.perf_counter() - began[0]
    total = _totals[generation]
    total["count"] += 1
    total["seconds"] += took
    # The collecting thread's CPU: on a busy machine the pause also holds time spent
    # waiting for a core.
    total["cpu"] += time.thread_time() - began[1]
    total["longest"] = max(total["longest"], took)


def _write(directory: Path, pid: int, done: set[str]) -> None:
    stats = {
        "pid": pid,
        "at": time.time(),
        "collections": {str(gen): dict(total) for gen, total in _totals.items()},
        # Not len(gc.get_objects()): a list of every object, each second, would itself
        # pause the process it measures (the census below is asked for once).
        "counts": gc.get_count(),
        "frozen": gc.get_freeze_count(),
    }
    path = directory / f"gc-{pid}.json"
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(stats))
    partial.replace(path)
    for trigger in directory.glob("census-*"):
        name = trigger.name[len("census-") :]
        if name.endswith(".json") or name in done:
            continue
        done.add(name)
        # A name starting "collect" asks for a full collection first: what it frees was
        # garbage, what stays is held. "garbage" says what that garbage was.
        collected = gc.collect() if name.startswith("collect") else None
        garbage = _garbage() if name.startswith("garbage") else None
        kinds = collections.Counter(type(o).__qualname__ for o in gc.get_objects())
        found = {"tracked": sum(kinds.values()), "types": kinds.most_common(40)}
        found["collected"] = collected
        if garbage is not None:
            found["garbage"] = garbage
        if tracemalloc.is_tracing():  # PYTHONTRACEMALLOC=1: where the memory was allocated
            top = tracemalloc.take_snapshot().statistics("lineno")[:40]
            found["allocated"] = [(str(stat.traceback), stat.size, stat.count) for stat in top]
        (directory / f"census-{name}-{pid}.json").write_text(json.dumps(found))


def _garbage() -> dict:
    """Run a full collection keeping what it finds unreachable; return what that was.

    The objects only a full collection frees are those of reference cycles that outlived
    the younger generations: the types most common among them (and among the frames' code)
    name the cycles a process leaves behind, which hold memory until its next full
    collection.
    """
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = list(gc.garbage)
        gc.garbage.clear()
    finally:
        gc.set_debug(0)
    kinds = collections.Counter(type(o).__qualname__ for o in found)
    code = collections.Counter(
        f"{o.f_code.co_filename}:{o.f_code.co_name}" for o in found if type(o).__name__ == "frame"
    )
    del found
    gc.collect()  # the cycles kept above, now unreachable again
    return {"count": sum(kinds.values()), "types": kinds.most_common(40),
            "frames": code.most_common(20)}  # fmt: skip


def install_from_environment() -> None:
    """Start counting and writing if ``CARDSERVER_GC_STATS`` names a directory."""
    directory = os.environ.get("CARDSERVER_GC_STATS")
    if not directory:
        return
    path, pid, done = Path(directory), os.getpid(), set()
    gc.callbacks.append(_on_collection)

    def loop() -> None:
        while True:
            _write(path, pid, done)
            time.sleep(1)

    threading.Thread(target=loop, name="gc-stats", daemon=True).start()
