"""Round trips counted inside a benchmark's worker: SQL statements, transactions, Redis.

``benchmarks.bot_calls`` starts its workers with ``--include benchmarks.probe`` and
``BENCH_PROBE_DIR`` set; Celery imports this module in each worker process, and it
counts, per process:

- ``statements``: every statement Django sends (``execute`` and each row of
  ``executemany``), through a wrapper put on each new connection;
- ``transactions``: commits and rollbacks of Django's transactions (``atomic``), each of
  which costs two round trips more than its statements (psycopg's ``BEGIN`` and the
  ``COMMIT`` or ``ROLLBACK``); a statement outside one commits on its own;
- ``redis``: the packed commands redis-py writes to a socket (a pipeline or a script is
  one), the broker's included;
- ``gc_us``: the CPU time of the process's garbage collections, in microseconds (each
  timed in the thread that ran it, by ``gc.callbacks``).

Every quarter of a second (and at exit) the counts are written to ``BENCH_PROBE_DIR/<pid>.json``,
which the benchmark reads at the window's start and end. The worker's code is not
changed: without ``BENCH_PROBE_DIR`` this module does nothing. The wrappers cost a few
microseconds a statement of their own.

``per_turn`` turns two readings into round trips a turn; ``profile_start`` and
``profile_end`` run py-spy on a worker through a window (``bot_calls --profile``).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import threading
import time
from pathlib import Path

COUNTS = {"statements": 0, "transactions": 0, "redis": 0, "gc_us": 0.0}
_LOCK = threading.Lock()


def _add(name: str, n: float = 1) -> None:
    with _LOCK:
        COUNTS[name] += n


_collection_started = threading.local()


def _collection_timed(phase: str, info: dict) -> None:
    if phase == "start":
        _collection_started.at = time.thread_time()
    elif getattr(_collection_started, "at", None) is not None:
        # Without the lock: a collection can start in a thread that holds it (any
        # allocation may set one off), and collections never run two at once.
        COUNTS["gc_us"] += 1e6 * (time.thread_time() - _collection_started.at)
        _collection_started.at = None


def collections_watch() -> None:
    """Count the CPU time of this process's garbage collections (``gc_us``)."""
    if _collection_timed not in gc.callbacks:
        gc.callbacks.append(_collection_timed)


def _statement_count(execute, sql, params, many, context):
    _add("statements", len(params) if many and isinstance(params, list) else 1)
    return execute(sql, params, many, context)


def watch(connection) -> None:
    """Count the statements of a connection made before this module was imported."""
    if _statement_count not in connection.execute_wrappers:
        connection.execute_wrappers.append(_statement_count)


def _install(folder: Path) -> None:
    import redis.connection
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.backends.signals import connection_created

    def created(sender, connection, **kwargs) -> None:
        watch(connection)

    connection_created.connect(created, weak=False)
    collections_watch()

    for name in ("_commit", "_rollback"):
        original = getattr(BaseDatabaseWrapper, name)

        def counted(self, _original=original):
            if self.connection is not None and not self.get_autocommit():
                _add("transactions")
            return _original(self)

        setattr(BaseDatabaseWrapper, name, counted)

    send = redis.connection.AbstractConnection.send_packed_command

    def send_counted(self, command, check_health=True):
        _add("redis")
        return send(self, command, check_health)

    redis.connection.AbstractConnection.send_packed_command = send_counted

    def write() -> None:
        with _LOCK:
            text = json.dumps(COUNTS)
        # Written aside and renamed: a reading never finds the file half written (it
        # skipped such a file, and a count a turn came out negative).
        path = folder / f"{os.getpid()}.json"
        path.with_suffix(".tmp").write_text(text)
        os.replace(path.with_suffix(".tmp"), path)

    def every_second() -> None:
        while True:
            time.sleep(0.25)
            write()

    def start() -> None:
        threading.Thread(target=every_second, name="bench-probe", daemon=True).start()

    def forked() -> None:
        # A prefork child counts its own from zero (its parent's file stays the parent's).
        global _LOCK
        _LOCK = threading.Lock()
        COUNTS.update(dict.fromkeys(COUNTS, 0))
        start()

    start()
    os.register_at_fork(after_in_child=forked)
    atexit.register(write)


def read(folder: Path) -> dict[str, int]:
    """The counts of every process that wrote to ``folder``, summed."""
    total = dict.fromkeys(COUNTS, 0)
    for path in folder.glob("*.json"):
        try:
            counts = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for name in total:
            total[name] += counts.get(name, 0)
    return total


def per_turn(before: dict, after: dict, turns: int) -> dict:
    """The round trips a turn, from the workers' counts (``benchmarks.probe``)."""
    if not turns:
        return {}
    each = {name: (after[name] - before[name]) / turns for name in after}
    each["postgres_round_trips"] = each["statements"] + 2 * each["transactions"]
    return {name: round(value, 2) for name, value in each.items()}


def profile_start(folder: Path | None, seconds: float, group: list | None):
    """Start py-spy on the first worker of ``group`` for ``seconds``, writing
    ``folder/bot-calls.svg``, if a folder is given."""
    if folder is None or not group:
        return None
    # Imported here: a worker imports this module, and needs none of it.
    import shutil
    import sys

    from benchmarks import harness

    folder.mkdir(parents=True, exist_ok=True)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    return harness.start(
        [spy, "record", "--pid", str(group[0].pid), "--duration",
         str(int(seconds)), "--rate", "100", "--gil", "--nonblocking",
         "--format", "flamegraph", "--output", str(folder / "bot-calls.svg")],
        env={}, log=folder / "py-spy.log",
    )  # fmt: skip


def profile_end(profiler) -> None:
    """Wait for py-spy to write its graph (it falls behind on a loaded machine)."""
    if profiler is None:
        return
    import subprocess

    from benchmarks import harness

    try:
        profiler.wait(timeout=300)
    except subprocess.TimeoutExpired:
        harness.stop_process_group(profiler, timeout=0)
        print("py-spy did not finish in time: no flame graph")


if os.environ.get("BENCH_PROBE_DIR"):
    _install(Path(os.environ["BENCH_PROBE_DIR"]))
