"""The scratch set-up the benchmarks share: a database, a broker queue, Django, servers.

(The ops tests, which start servers of their own too, use its process helpers.)

A benchmark runs in a process of its own and must leave nothing behind on a machine that
others share: ``scratch_database`` creates a PostgreSQL database (or an SQLite file) and
drops it at the end, whatever happens; ``broker_queue`` gives the Celery messages a queue
on Redis that no other worker reads, emptied before and after (another database on the
same Redis is never touched); ``environment`` is what Django, gunicorn and Celery workers
need to run on them; ``django_setup`` configures this process with it.

Every server, worker or client a benchmark starts goes through ``start`` (a process
group of its own, its output appended to a log) and ``stop_process_group`` or
``stop_process_groups`` (SIGTERM, then SIGKILL to what is left of the group); it is
ready when ``wait_until`` sees ``answers`` (an HTTP GET answered) or ``accepts`` (a TCP
connection taken); ``log_lines`` and ``log_tail`` read what it wrote. ``rounds`` orders
the runs of a comparison so that they take turns, ``write_json`` writes a benchmark's
figures for ``--json`` (``benchmarks.results`` records them), and ``bench_lock`` holds the
shared machine's benchmark lock. The CPU and memory of the processes are read by
``benchmarks.machine``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

BASE_DIR = Path(__file__).resolve().parent.parent
POSTGRES = "postgres://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True, slots=True)
class Database:
    name: str
    url: str


@contextmanager
def scratch_database(
    server: str = POSTGRES, *, sqlite: bool = False, name: str = ""
) -> Iterator[Database]:
    """Create an empty database on ``server`` (or an SQLite file); drop it at the end.
    ``name`` picks its name (one left by an interrupted run is dropped first)."""
    name = name or f"cardserver_bench_{uuid.uuid4().hex[:8]}"
    if sqlite:
        with tempfile.TemporaryDirectory() as folder:
            try:
                yield Database(name, f"sqlite:///{folder}/{name}.sqlite3")
            finally:
                _django_disconnect()
        return
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield Database(name, f"{server}/{name}")
    finally:
        _django_disconnect()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            # FORCE: a server or worker that did not stop in time must not keep it.
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _django_disconnect() -> None:
    # This process's own Django connection (when it set Django up) must let go first.
    if "django.db" in sys.modules:
        from django.db import connections

        connections.close_all()


@dataclass(frozen=True, slots=True)
class Broker:
    """Where Celery messages go: a Redis URL and a queue, or the embedded broker."""

    url: str | None
    queue: str

    def empty(self, *, forget: bool = False) -> None:
        """Drop the messages waiting in the queue; with ``forget``, its routing as well."""
        if self.url is not None:
            import redis

            # The binding must stay while this process may still send: kombu declares it
            # once per process, and a message to an unbound queue is lost.
            keys = [self.queue, f"_kombu.binding.{self.queue}"] if forget else [self.queue]
            redis.Redis.from_url(self.url).delete(*keys)


@contextmanager
def broker_queue(url: str | None, *, required: bool = False) -> Iterator[Broker]:
    """Yield a broker queue of this run's own on Redis at ``url``, emptied before and after.

    When Redis does not answer there, the messages go to the embedded broker instead,
    unless ``required``.
    """
    if url is not None and not _redis_answers(url):
        if required:
            sys.exit(f"Redis does not answer at {url}")
        url = None
    broker = Broker(url, f"bench-{uuid.uuid4().hex[:8]}")
    broker.empty()
    try:
        yield broker
    finally:
        broker.empty(forget=True)


def _redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_timeout=0.5).ping())
    except (redis.RedisError, OSError):
        return False


def environment(*, database: Database, broker: Broker | None = None, var_dir: Path) -> dict:
    """Return the environment variables of a Django process on the scratch set-up."""
    env = {
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "DATABASE_URL": database.url,
        "CARDSERVER_VAR_DIR": str(var_dir),
        "LOG_LEVEL": "WARNING",
    }
    if broker is not None and broker.url is not None:
        # A queue of its own: another worker on the same Redis must not take its tasks.
        env |= {"CELERY_BROKER_URL": broker.url, "CELERY_TASK_DEFAULT_QUEUE": broker.queue}
    return env


def django_setup(env: Mapping[str, str]) -> None:
    """Set Django up in this process on the scratch set-up and migrate its database."""
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


@contextmanager
def scratch_arguments(parser) -> None:
    """The options of a benchmark run on ``django_on_scratch_database``: the database
    server, or a scratch SQLite file instead."""
    parser.add_argument("--server", default=POSTGRES)
    parser.add_argument("--sqlite", action="store_true", help="Use a scratch SQLite file.")


def django_on_scratch_database(server: str = POSTGRES, *, sqlite: bool = False) -> Iterator[None]:
    """Django set up in this process on a scratch database (dropped at the end), for the
    benchmarks that call the services in process."""
    with tempfile.TemporaryDirectory() as var_dir, scratch_database(server, sqlite=sqlite) as db:
        django_setup(environment(database=db, var_dir=Path(var_dir)))
        yield


def start(
    command: list[str], *, env: Mapping[str, str], log: Path | None = None,
    errors: Path | None = None, inherit: bool = True,
) -> subprocess.Popen:  # fmt: skip
    """Start ``command`` (``python -m ...`` in the project) as a process group of its own.

    ``env`` is added to this process's environment, or with ``inherit=False`` is the
    whole of it (a server that must not see the calling shell's settings). Its output is
    appended to ``log`` (nowhere without one), its standard error to ``errors`` if
    given, else to ``log`` too.
    """
    with contextlib.ExitStack() as files:
        # The child keeps its own copies of the handles; this process's are closed.
        stdout = files.enter_context(open(log, "ab")) if log else subprocess.DEVNULL
        stderr = files.enter_context(open(errors, "ab")) if errors else subprocess.STDOUT
        return subprocess.Popen(
            command, cwd=BASE_DIR, env={**os.environ, **env} if inherit else dict(env),
            stdout=stdout, stderr=stderr, start_new_session=True,
        )  # fmt: skip


def stop_process_group(process: subprocess.Popen, timeout: float = 30) -> None:
    """Stop a process started with ``start_new_session=True`` and its group: SIGTERM, then
    SIGKILL if it has not ended within ``timeout`` seconds. The group is signalled even
    when its leader has ended: a script's background children (``cmd &``) outlive it in
    the group, and were left running when only a live leader was signalled."""
    stop_process_groups([process], timeout)


def stop_process_groups(
    processes: Iterable[subprocess.Popen | None], timeout: float = 30
) -> None:
    """Stop the process groups of ``processes`` (None is passed over) as
    ``stop_process_group`` does, all at once: SIGTERM to every group first, so that they
    end side by side (a web server's streams and the clients reading them), then SIGKILL
    to each leader not ended within ``timeout`` seconds, and to what is left of its group
    after up to ``timeout`` seconds more (a reloader's child or a pool process may outlive
    its parent)."""
    processes = [process for process in processes if process is not None]
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    deadline = time.monotonic() + timeout
    for process in processes:
        while _group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def cpu_queues(default_queue: str = "celery") -> str:
    """Return ``-Q``'s value for one worker that plays the CPU worker's part and the
    interactive worker's (``INTERACTIVE_QUEUE``) for this default queue."""
    interactive = "interactive" if default_queue == "celery" else f"{default_queue}-interactive"
    return f"{default_queue},{interactive}"


def celery_worker(*, node: str, pool: str = "prefork", concurrency: int = 1) -> list[str]:
    """Return the command of a Celery worker of the project, named ``node`` (``name@host``)."""
    return [
        sys.executable, "-m", "celery", "-A", "cardserver", "worker", f"--pool={pool}",
        f"--concurrency={concurrency}", "--without-mingle", "--without-gossip", "-n", node,
        "--loglevel=WARNING",
    ]  # fmt: skip


def wait_until(predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
    """Wait until ``predicate()`` is true; raise TimeoutError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


def answers(url: str, *, status: int | None = 200, timeout: float = 5) -> bool:
    """Whether a GET of ``url`` is answered, with ``status`` (any status if it is None):
    a server's readiness, for ``wait_until``."""
    import httpx

    try:
        answer = httpx.get(url, timeout=timeout)
    except httpx.HTTPError:
        return False
    return status is None or answer.status_code == status


def accepts(port: int, *, timeout: float = 1) -> bool:
    """Whether something on 127.0.0.1:``port`` takes a TCP connection."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout):
        return True
    return False


def log_lines(path: Path) -> list[str]:
    """The lines a process wrote to its log ``path`` so far (none if there is no file)."""
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def log_tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of the log ``path``: what a process said before it ended."""
    return "\n".join(log_lines(path)[-lines:])


T = TypeVar("T")


def rounds(count: int, contenders: Sequence[T]) -> Iterator[tuple[int, T]]:
    """Yield (round, contender): ``count`` rounds, in each every contender once, in order
    (a, b, a, b, ...), so that a machine whose load drifts (others share it) weighs on
    each alike; compare the medians of each one's runs."""
    for number in range(count):
        for contender in contenders:
            yield number, contender


def write_json(path: Path | None, figures, *, indent: int = 2) -> None:
    """Write a benchmark's ``figures`` to ``path`` (its ``--json``; nothing if None), where
    ``python -m benchmarks record`` and the tests read them."""
    if path is not None:
        path.write_text(json.dumps(figures, indent=indent) + "\n")


@contextmanager
def bench_lock(path: Path | None) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (none when it is None), as ``flock -x`` does, so
    that benchmarks sharing a machine time one at a time; say how long it took to get."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        started = time.perf_counter()
        fcntl.flock(handle, fcntl.LOCK_EX)
        print(f"(lock {path} taken after {time.perf_counter() - started:.0f} s)", flush=True)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
