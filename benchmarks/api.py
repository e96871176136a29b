"""The match API under load: gunicorn on PostgreSQL, clients playing Durak over HTTP.

    python -m benchmarks.api --db postgres [--seconds 20] [--repeats 3] [--clients 16]
                             [--rate 100] [--workers 2] [--threads 8] [--worker]
                             [--servers asgi,gthread]

It creates a fresh PostgreSQL database (dropped at the end), migrates it, starts
gunicorn on 127.0.0.1 with ``DEBUG=0`` in each shape of ``--servers`` (``asgi``: the
production shape, uvicorn workers on ``cardserver.asgi`` with the sync API in a pool of
``--threads`` threads; ``gthread``: the former one, gthread workers on
``cardserver.wsgi``), ``--workers`` processes each, creates users with tokens, and
measures, ``--repeats`` times each, the shapes taking turns within every repeat:

(a) throughput at saturation: ``--clients`` threads, each playing its own 2-player Durak
    match in which its user holds both seats, as fast as it can: ``GET .../me/`` (the
    view and legal moves), then ``POST .../moves/`` with a random legal move; a match
    that ends is replaced by a new one (``POST /matches/``). Reported: moves accepted per
    second.
(b) latency at a steady offered load of ``--rate`` moves per second, open loop: the
    moves are due on a fixed schedule (``--lanes`` matches, each with every
    ``lanes / rate`` seconds a slot), a lane reads its view before its slot and sends its
    move at the slot, and the latency of a move ``POST`` is measured from the slot's
    scheduled time, so a server that falls behind shows its queueing delay (no
    coordinated omission). Reported: median and 99th percentile.
(c) in-process, through ``games.move_services``: the cost of one move (``match_move_submit``)
    and of one view (``match_state`` + ``view``) near ply 10 and near ply 300 of long
    Durak ``fool`` series, and, for contrast, of a view rebuilt by replaying the log.

The load generator runs on the same machine, in this process: one client per thread,
each with one kept-alive connection, through http.client (the default, ``--http
stdlib``) or httpx (``--http httpx``, about three times the CPU per request: on two
cores, CPU the generator takes is CPU the server does not get).
Celery messages go to Redis (``--broker``, default database 14 on 127.0.0.1:6379) when
it answers, on a queue of the run's own (emptied before and after), else to the embedded
broker; no worker consumes them unless ``--worker`` starts one. The scratch database, the
queue and the servers come from ``benchmarks.harness``, the clients of (a) and (b) from
``benchmarks.api_load``, the CPU figures and the calibration from ``benchmarks.machine``.
The table reports medians over the repeats, with min-max, and again over the quiet runs
alone (those during which other work stayed under ``--idle-below`` cores).

The machine may be shared: before each run the benchmark waits (up to
``--idle-timeout`` seconds) until other processes use fewer than ``--idle-below`` cores,
and each run reports the cores other work used meanwhile, the CPU milliseconds that
gunicorn, PostgreSQL and the load generator spent per accepted move, and how long a fixed
piece of Python (200 random Durak deals in the engine) took just before: a shared virtual
machine also changes speed without any process of its own to show for it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import api_load, harness, machine

# --- Environment ------------------------------------------------------------------------


# gunicorn's arguments for each server shape (cardserver/gunicorn.py gives the rest).
SHAPES = {
    "asgi": ["cardserver.asgi:application"],
    # The former shape exactly: gthread workers, gunicorn's keep-alive of 2 s.
    "gthread": ["cardserver.wsgi", "--worker-class", "gthread", "--keep-alive", "2"],
}
SHAPE_NAMES = {"asgi": "uvicorn workers, sync API in a thread pool", "gthread": "gthread"}


class Server:
    """gunicorn serving the project on the scratch database, once per server shape (and a
    Celery worker if asked)."""

    def __init__(
        self,
        *,
        env: dict,
        database: harness.Database,
        workers: int,
        threads: int,
        worker: bool,
        log: Path | None = None,
        shapes: tuple[str, ...] = ("asgi",),
        extra: dict[str, list[str]] | None = None,
    ) -> None:
        self.database = database.name
        self.shapes = shapes
        self.ports = {shape: harness.free_port() for shape in shapes}
        self.port = self.ports[shapes[0]]
        self.env = env | {
            "DEBUG": "0",
            "SECRET_KEY": "benchmark-" + "k" * 50,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            # Plain HTTP on the loopback, as behind a proxy that ends TLS.
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_COOKIES": "0",
        }
        self.workers, self.threads, self.worker = workers, threads, worker
        self.log = log
        # More of gunicorn's arguments, by shape.
        self.extra = extra or {}
        self.processes: list = []

    def __enter__(self) -> Server:
        # The production configuration (cardserver/gunicorn.py, JSON access log), its
        # log lines written nowhere.
        for shape, port in self.ports.items():
            gunicorn = [
                sys.executable, "-m", "gunicorn", "-c", "python:cardserver.gunicorn",
                *SHAPES[shape], "--bind", f"127.0.0.1:{port}", "--workers",
                str(self.workers), "--threads", str(self.threads), *self.extra.get(shape, ()),
            ]  # fmt: skip
            env = self.env | {"LOG_LEVEL": "INFO", "GUNICORN_THREADS": str(self.threads)}
            self.processes.append(harness.start(gunicorn, env=env, log=self.log))
        if self.worker:
            node = f"bench-api-{os.getpid()}@{socket.gethostname()}"
            self.processes.append(
                harness.start(
                    [*harness.celery_worker(node=node, pool="solo"), "-Q",
                     harness.cpu_queues(self.env.get("CELERY_TASK_DEFAULT_QUEUE", "celery"))],
                    env=self.env,
                )  # fmt: skip
            )
        try:
            for shape in self.shapes:
                self.use(shape)
                harness.wait_until(self._healthy, timeout=30, what=f"gunicorn ({shape})")
        except TimeoutError:
            self.__exit__()
            raise
        self.use(self.shapes[0])
        return self

    def use(self, shape: str) -> None:
        """Make ``url`` and ``port`` those of the server of ``shape``."""
        self.port = self.ports[shape]

    def _healthy(self) -> bool:
        return harness.answers(f"{self.url}/api/v1/health/")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        harness.stop_process_groups(self.processes)


def _tokens(count: int) -> list[str]:
    from django.contrib.auth import get_user_model

    from accounts.tokens import token_create

    User = get_user_model()
    keys = []
    for number in range(count):
        user = User.objects.create_user(username=f"bench{os.getpid()}_{number}_{time.time_ns()}")
        keys.append(token_create(user=user)[1])
    return keys


def _username(token: str) -> str:
    from accounts.models import ApiToken
    from accounts.tokens import token_hash

    return ApiToken.objects.select_related("user").get(key_hash=token_hash(token)).user.username


# --- Part (c): cost per move in the service ---------------------------------------------


def run_service_costs(samples: int = 10) -> dict:
    """Time moves and views near ply 10 and ply 300 of long fool series, in process.

    A move is ``match_move_submit`` (lock, engine, insert, update, commit); a view is what
    ``GET .../me/`` does with the database and the engine (read the match row, load the
    state from its snapshot, the seat's view and legal moves). For contrast, the same view
    with the snapshot ignored, so the state is replayed from the deal and the whole log.
    """
    from django.contrib.auth import get_user_model
    from django.db import connection

    from games.models import Match
    from games.move_services import match_move_submit
    from games.rows import match_row
    from games.seating import SeatHolder
    from games.selectors import match_state
    from games.services import match_create

    user = get_user_model().objects.create_user(username=f"series{time.time_ns()}")
    marks = (10, 300)
    results: dict[str, dict[int, list[float]]] = {
        name: {mark: [] for mark in marks} for name in ("move", "view", "replay_view")
    }
    seed = 0
    while min(len(results["move"][m]) for m in marks) < samples * 3 and seed < 200:
        seed += 1
        rng = random.Random(seed)
        match = match_create(
            creator=user, game="durak", players=2, format="fool",
            seats=[SeatHolder(user=user), SeatHolder(user=user)],
        )  # fmt: skip
        while True:
            started = time.perf_counter()
            current = match_row(match.pk)
            state = match_state(current)
            state.view(current.to_move)
            legal = state.legal_moves()
            view_time = time.perf_counter() - started
            if current.status != Match.Status.ACTIVE or current.ply >= marks[-1] + samples:
                break
            mark = next((m for m in marks if m <= current.ply < m + samples), None)
            started = time.perf_counter()
            match_move_submit(
                match_id=match.pk, seat=current.to_move, ply=current.ply, move=rng.choice(legal)
            )
            move_time = time.perf_counter() - started
            if mark is not None:
                results["move"][mark].append(1000 * move_time)
                results["view"][mark].append(1000 * view_time)
                current.snapshot_ply = None  # ignore the snapshot: replay the whole log
                started = time.perf_counter()
                replayed = match_state(current)
                replayed.view(current.to_move)
                replayed.legal_moves()
                results["replay_view"][mark].append(1000 * (time.perf_counter() - started))
    connection.close()
    medians = {
        name: {mark: statistics.median(times) for mark, times in by_mark.items() if times}
        for name, by_mark in results.items()
    }
    return medians | {"series": seed}


# --- Main -------------------------------------------------------------------------------


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f}  ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=["postgres"], default="postgres")
    parser.add_argument("--pg", default=harness.POSTGRES, help="the PostgreSQL server")
    parser.add_argument(
        "--broker",
        default=f"{harness.REDIS}/14",
        help="Redis for the Celery messages (a queue of the run's own; embedded if it is down)",
    )
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--lanes", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--worker", action="store_true", help="run a Celery worker too")
    parser.add_argument("--parts", default="abc", help="which parts to run, e.g. ab")
    parser.add_argument(
        "--servers", default="asgi", help="server shapes, taking turns: asgi, gthread or both"
    )
    parser.add_argument(
        "--idle-below",
        type=float,
        default=0.15,
        help="before each run, wait until other work uses fewer cores than this",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=900, help="seconds to wait for that at most"
    )
    parser.add_argument(
        "--http",
        choices=sorted(api_load.TRANSPORTS),
        default="stdlib",
        help="the load generator's client",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--server-log", type=Path, help="append gunicorn's log (access log included) here"
    )
    args = parser.parse_args()
    # Stopped from outside (timeout, Ctrl-C), still stop gunicorn and drop the database.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    api_load.Player.transport = api_load.TRANSPORTS[args.http]

    with (
        tempfile.TemporaryDirectory() as var_dir,
        harness.scratch_database(args.pg) as database,
        harness.broker_queue(args.broker) as broker,
    ):
        env = harness.environment(database=database, broker=broker, var_dir=Path(var_dir))
        # Part (c) runs the services in this process: its tasks go to the broker too.
        harness.django_setup(env | {"CELERY_TASK_ALWAYS_EAGER": "0"})
        with Server(
            env=env, database=database, workers=args.workers, threads=args.threads,
            worker=args.worker, log=args.server_log, shapes=tuple(args.servers.split(",")),
        ) as server:  # fmt: skip
            results, service = measure(args, server)

    for shape, (throughput, latency) in results.items():
        print()
        print(
            f"Python {platform.python_version()}, {os.cpu_count()} cores, gunicorn "
            f"{args.workers} workers x {args.threads} threads ({SHAPE_NAMES[shape]}), "
            f"PostgreSQL, broker {'Redis' if broker.url else 'embedded'}"
            f"{' + Celery worker' if args.worker else ''}; load generator {args.http}; "
            f"{args.repeats} runs of {args.seconds:g} s; median (min-max)"
        )
        if throughput:
            _print_throughput(args, throughput)
        if latency:
            _print_latency(args, latency)
    if service:
        _print_service(service)
    if args.json:
        first = results[server.shapes[0]]
        figures = {"throughput": first[0], "latency": first[1], "service": service}
        figures["shapes"] = {
            name: {"throughput": runs[0], "latency": runs[1]} for name, runs in results.items()
        }
        harness.write_json(args.json, figures)


def measure(args, server: Server) -> tuple[dict[str, tuple[list, list]], dict | None]:
    """Run the parts asked for; return the runs of (a) and of (b) per server shape, and
    the costs of (c)."""
    tokens = _tokens(args.clients + args.lanes)
    names = [_username(t) for t in tokens]
    results: dict[str, tuple[list, list]] = {shape: ([], []) for shape in server.shapes}
    for repeat, shape in harness.rounds(args.repeats, server.shapes):
        server.use(shape)
        throughput, latency = results[shape]
        print(f"-- {shape}", flush=True)
        if "a" in args.parts:
            machine.wait_for_idle(busy_below=args.idle_below, timeout=args.idle_timeout)
            speed = machine.calibrate()
            got = api_load.run_throughput(
                server.url, tokens[: args.clients], names[: args.clients], args.seconds,
                server,
            )  # fmt: skip
            got["calibration_ms"] = speed
            throughput.append(got)
            print(f"(a) run {repeat + 1}: {json.dumps(got)}", flush=True)
        if "b" in args.parts:
            machine.wait_for_idle(busy_below=args.idle_below, timeout=args.idle_timeout)
            speed = machine.calibrate()
            got = api_load.run_latency(
                server.url, tokens[args.clients :], names[args.clients :], args.rate,
                args.seconds, server,
            )  # fmt: skip
            got["calibration_ms"] = speed
            latency.append(got)
            print(f"(b) run {repeat + 1}: {json.dumps(got)}", flush=True)
    service = None
    if "c" in args.parts:
        machine.wait_for_idle(busy_below=args.idle_below, timeout=args.idle_timeout)
        service = run_service_costs()
    return results, service


def _quiet(runs: list[dict], args) -> list[dict]:
    """Return the runs during which other work used fewer than ``--idle-below`` cores."""
    return [r for r in runs if r["other_cores"] < args.idle_below]


def _print_throughput(args, throughput: list[dict]) -> None:
    quiet = _quiet(throughput, args)
    print(
        f"(a) {args.clients} clients, moves accepted/s:   "
        + _spread([r["moves_per_s"] for r in throughput])
        + "   target >= 250"
    )
    if quiet:
        print(
            f"    in the {len(quiet)} quiet run(s):          "
            + _spread([r["moves_per_s"] for r in quiet])
        )
    print(
        "    load generator CPU (cores):     " + _spread([r["generator_cpu"] for r in throughput])
    )
    for part in ("gunicorn", "postgres", "generator"):
        print(
            f"    CPU ms per move, {part + ':':<15}"
            + _spread([r["cpu_ms_per_move"][part] for r in throughput])
        )
    print("    cores busy with other work:      " + _spread([r["other_cores"] for r in throughput]))
    print(
        "    calibration ms (machine speed):  " + _spread([r["calibration_ms"] for r in throughput])
    )


def _print_latency(args, latency: list[dict]) -> None:
    quiet = _quiet(latency, args)
    print(
        f"(b) {args.rate:g} moves/s open loop, POST median ms: "
        + _spread([r["median_ms"] for r in latency])
    )
    print(
        "                          p99 ms:    "
        + _spread([r["p99_ms"] for r in latency])
        + "   target < 40"
    )
    if quiet:
        print(
            f"    in the {len(quiet)} quiet run(s), median: "
            + _spread([r["median_ms"] for r in quiet])
        )
        print("                          p99 ms:    " + _spread([r["p99_ms"] for r in quiet]))
    print("    cores busy with other work:      " + _spread([r["other_cores"] for r in latency]))
    print("    calibration ms (machine speed):  " + _spread([r["calibration_ms"] for r in latency]))


def _print_service(service: dict) -> None:
    print(f"(c) fool series, in process ({service['series']} series played), median ms:")
    print("                                 ply 10    ply 300")
    for name, label in (
        ("move", "move (match_move_submit)"),
        ("view", "view (row + snapshot)"),
        ("replay_view", "view replaying the log"),
    ):
        row = service[name]
        nan = float("nan")
        print(f"    {label:<28} {row.get(10, nan):6.2f}   {row.get(300, nan):6.2f}")


if __name__ == "__main__":
    main()
