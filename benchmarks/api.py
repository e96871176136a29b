"""The match API under load: gunicorn on PostgreSQL, clients playing Durak over HTTP.

    python -m benchmarks.api --db postgres [--seconds 20] [--repeats 3] [--clients 16]
                             [--rate 100] [--workers 2] [--threads 8] [--worker]

It creates a fresh PostgreSQL database (dropped at the end), migrates it, starts
gunicorn (``--workers`` processes, gthread, ``--threads`` each) on 127.0.0.1 with
``DEBUG=0``, creates users with tokens, and measures, ``--repeats`` times each:

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
(c) in-process, through ``games.play``: the cost of one move (``match_move_submit``)
    and of one view (``match_state`` + ``view``) near ply 10 and near ply 300 of long
    Durak ``fool`` series, and, for contrast, of a view rebuilt by replaying the log.

The load generator runs on the same machine, in this process: one client per thread,
each with one kept-alive connection, through http.client (the default, ``--http
stdlib``) or httpx (``--http httpx``, about three times the CPU per request: on two
cores, CPU the generator takes is CPU the server does not get).
Celery messages go to Redis (``--broker``, default database 14 on 127.0.0.1:6379) when
it answers, on a queue of the run's own (emptied before and after), else to the embedded
broker; no worker consumes them unless ``--worker`` starts one. The scratch database, the
queue and the servers come from ``benchmarks.harness``. The table reports medians over
the repeats, with min-max, and again over the quiet runs alone (those during which other
work stayed under ``--idle-below`` cores).

The machine may be shared: before each run the benchmark waits (up to
``--idle-timeout`` seconds) until other processes use fewer than ``--idle-below`` cores,
and each run reports the cores other work used meanwhile, the CPU milliseconds that
gunicorn, PostgreSQL and the load generator spent per accepted move, and how long a fixed
piece of Python (200 random Durak deals in the engine) took just before: a shared virtual
machine also changes speed without any process of its own to show for it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from benchmarks import harness

# --- Environment ------------------------------------------------------------------------


class Server:
    """gunicorn serving the project on the scratch database (and a Celery worker if asked)."""

    def __init__(
        self,
        *,
        env: dict,
        database: harness.Database,
        workers: int,
        threads: int,
        worker: bool,
        log: Path | None = None,
    ) -> None:
        self.database = database.name
        self.port = harness.free_port()
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
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> Server:
        # The production configuration (cardserver/gunicorn.py: gthread, JSON access
        # log), its log lines written nowhere.
        gunicorn = [
            sys.executable, "-m", "gunicorn", "-c", "python:cardserver.gunicorn",
            "cardserver.wsgi", "--bind", f"127.0.0.1:{self.port}", "--workers",
            str(self.workers), "--threads", str(self.threads),
        ]  # fmt: skip
        self.processes.append(
            harness.start(gunicorn, env=self.env | {"LOG_LEVEL": "INFO"}, log=self.log)
        )
        if self.worker:
            node = f"bench-api-{os.getpid()}@{socket.gethostname()}"
            self.processes.append(
                harness.start(harness.celery_worker(node=node, pool="solo"), env=self.env)
            )
        try:
            harness.wait_until(self._healthy, timeout=30, what="gunicorn did not answer")
        except SystemExit:
            self.__exit__()
            raise
        return self

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/api/v1/health/").status_code == 200
        except httpx.HTTPError:
            return False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            harness.stop(process)


def _tokens(count: int) -> list[str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    User = get_user_model()
    keys = []
    for number in range(count):
        user = User.objects.create_user(username=f"bench{os.getpid()}_{number}_{time.time_ns()}")
        keys.append(Token.objects.create(user=user).key)
    return keys


# --- Clients ----------------------------------------------------------------------------


class HttpxTransport:
    """Requests through httpx, one connection kept alive."""

    def __init__(self, base_url: str, token: str) -> None:
        self.client = httpx.Client(
            base_url=base_url, headers={"Authorization": f"Token {token}"}, timeout=60
        )

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        answer = self.client.request(method, path, json=body)
        return answer.status_code, answer.json()

    def close(self) -> None:
        self.client.close()


class StdlibTransport:
    """Requests through http.client, one connection kept alive: a third of httpx's CPU."""

    def __init__(self, base_url: str, token: str) -> None:
        host, port = base_url.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=60)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        payload = None if body is None else json.dumps(body)
        self.connection.request(method, path, body=payload, headers=self.headers)
        answer = self.connection.getresponse()
        return answer.status, json.loads(answer.read())

    def close(self) -> None:
        self.connection.close()


TRANSPORTS = {"httpx": HttpxTransport, "stdlib": StdlibTransport}


class Player:
    """One user playing its own 2-player Durak matches (it holds both seats)."""

    transport = StdlibTransport

    def __init__(self, base_url: str, token: str, seed: int) -> None:
        self.http = self.transport(base_url, token)
        self.rng = random.Random(seed)
        self.match_id: int | None = None

    def new_match(self, username: str) -> None:
        status, body = self.http.request(
            "POST",
            "/api/v1/matches/",
            {"game": "durak", "players": 2, "seats": [{"user": username}] * 2},
        )
        if status != 201:
            raise RuntimeError(f"creating a match: {status} {body}")
        self.match_id = body["id"]

    def view(self) -> dict:
        status, body = self.http.request("GET", f"/api/v1/matches/{self.match_id}/me/")
        if status != 200:
            raise RuntimeError(f"reading a view: {status} {body}")
        return body

    def move(self, view: dict) -> tuple[int, dict]:
        return self.http.request(
            "POST",
            f"/api/v1/matches/{self.match_id}/moves/",
            {
                "ply": view["ply"],
                "seat": view["seat"],
                "move": self.rng.choice(view["legal_moves"]),
            },
        )


def _username(token: str) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.select_related("user").get(key=token).user.username


def run_throughput(
    url: str, tokens: list[str], names: list[str], seconds: float, server: Server
) -> dict:
    """Part (a): every client plays as fast as it can; return accepted moves per second."""
    accepted = [0] * len(tokens)
    errors = [0] * len(tokens)
    start_gate = threading.Barrier(len(tokens) + 1, timeout=120)
    stop = threading.Event()
    failures: list[BaseException] = []

    def client(index: int) -> None:
        player = Player(url, tokens[index], seed=index)
        try:
            player.new_match(names[index])
            start_gate.wait()
            while not stop.is_set():
                view = player.view()
                status, body = player.move(view)
                if status == 200:
                    accepted[index] += 1
                    if body["ended_match"]:
                        player.new_match(names[index])
                else:
                    errors[index] += 1
        except BaseException as exc:
            failures.append(exc)
            start_gate.abort()
            stop.set()
        finally:
            player.http.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(tokens))]
    for thread in threads:
        thread.start()
    try:
        start_gate.wait()
    except threading.BrokenBarrierError:
        for thread in threads:
            thread.join()
        raise RuntimeError(f"a client failed: {failures[:1]}") from None
    web0, db0 = _process_cpu(f"127.0.0.1:{server.port}"), _process_cpu(server.database)
    machine0 = _machine_cpu()[0]
    cpu0, moves0, started = _cpu(), sum(accepted), time.perf_counter()
    time.sleep(seconds)
    moves = sum(accepted) - moves0
    elapsed = time.perf_counter() - started
    cpu = _cpu() - cpu0
    web = _cpu_since(web0, f"127.0.0.1:{server.port}")
    db = _cpu_since(db0, server.database)
    machine = _machine_cpu()[0] - machine0
    stop.set()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"a client failed: {failures[:1]}")
    return {
        "moves_per_s": moves / elapsed,
        "errors": sum(errors),
        "generator_cpu": cpu / elapsed,
        # CPU per accepted move (a view and a move request), in ms.
        "cpu_ms_per_move": {
            "gunicorn": 1000 * web / max(moves, 1),
            "postgres": 1000 * db / max(moves, 1),
            "generator": 1000 * cpu / max(moves, 1),
        },
        # Cores busy with anything else (other processes, the kernel) during the run.
        "other_cores": max(0.0, machine - web - db - cpu) / elapsed,
    }


def run_latency(
    url: str, tokens: list[str], names: list[str], rate: float, seconds: float, server: Server
) -> dict:
    """Part (b): moves due on a fixed schedule; latency from the scheduled send time."""
    lanes = len(tokens)
    period = lanes / rate
    latencies: list[list[float]] = [[] for _ in range(lanes)]
    late_starts = [0] * lanes
    errors = [0] * lanes
    ready = threading.Barrier(lanes + 1, timeout=120)
    origin: list[float] = []
    failures: list[BaseException] = []

    def lane(index: int) -> None:
        player = Player(url, tokens[index], seed=1000 + index)
        try:
            player.new_match(names[index])
            ready.wait()
            ready.wait()  # the origin is set between the two waits
            slot = origin[0] + index / rate
            end = origin[0] + seconds
            while slot < end:
                view = player.view()
                pause = slot - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
                else:
                    late_starts[index] += 1
                status, body = player.move(view)
                done = time.perf_counter()
                if status == 200:
                    latencies[index].append(done - slot)
                    if body["ended_match"]:
                        player.new_match(names[index])
                else:
                    errors[index] += 1
                slot += period
        except BaseException as exc:
            failures.append(exc)
            ready.abort()
        finally:
            player.http.close()

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(lanes)]
    for thread in threads:
        thread.start()
    try:
        ready.wait()
        origin.append(time.perf_counter() + 0.5)
        ready.wait()
    except threading.BrokenBarrierError:
        pass
    web0, db0 = _process_cpu(f"127.0.0.1:{server.port}"), _process_cpu(server.database)
    machine0, cpu0, started = _machine_cpu()[0], _cpu(), time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    ours = (
        _cpu_since(web0, f"127.0.0.1:{server.port}")
        + _cpu_since(db0, server.database)
        + _cpu() - cpu0
    )  # fmt: skip
    other_cores = max(0.0, _machine_cpu()[0] - machine0 - ours) / elapsed
    if failures:
        raise RuntimeError(f"a lane failed: {failures[:1]}")
    flat = sorted(x for lane_latencies in latencies for x in lane_latencies)
    return {
        "moves": len(flat),
        "achieved_rate": len(flat) / seconds,
        "median_ms": 1000 * statistics.median(flat),
        "p99_ms": 1000 * flat[min(len(flat) - 1, int(0.99 * len(flat)))],
        "max_ms": 1000 * flat[-1],
        "late_starts": sum(late_starts),
        "errors": sum(errors),
        "other_cores": other_cores,
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_TICKS = os.sysconf("SC_CLK_TCK")


def _machine_cpu() -> tuple[float, float]:
    """Return (busy, total) CPU seconds of the whole machine so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    total = sum(fields[:8])
    return (total - idle) / _TICKS, total / _TICKS


def calibrate() -> float:
    """Return the milliseconds a fixed piece of pure Python takes now (lower is faster).

    The machine's speed varies beyond what other processes take (a virtual machine's
    host is shared too); this figure, taken before each run, says how fast it was.
    """
    from games.engine import load_game

    game = load_game("durak", players=2)
    started = time.perf_counter()
    for seed in range(200):
        state = game.deal(seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            state = state.play(rng.choice(state.legal_moves()))
    return 1000 * (time.perf_counter() - started)


def wait_for_idle(*, busy_below: float, timeout: float) -> float:
    """Wait until other processes use less than ``busy_below`` cores; return that use.

    The machine is shared: a run measured while something else computes measures that
    too. Gives up (and returns the last figure) after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        busy0, _ = _machine_cpu()
        time.sleep(2)
        busy = (_machine_cpu()[0] - busy0) / 2
        if busy < busy_below or time.monotonic() > deadline:
            return busy


def _process_cpu(match: str) -> dict[int, float]:
    """Return ``{pid: CPU seconds so far}`` of the processes whose command line has ``match``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if match not in command:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICKS
    return found


def _cpu_since(before: dict[int, float], match: str) -> float:
    """Return the CPU seconds the processes matching ``match`` used since ``before``.

    A process that started meanwhile counts in full; one that ended (PostgreSQL ends a
    backend when Django closes a connection older than ``CONN_MAX_AGE``) is left out, so
    the figure can be a little low, never negative.
    """
    now = _process_cpu(match)
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in now.items())


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
    from games.play import match_move_submit
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
        "--idle-below",
        type=float,
        default=0.15,
        help="before each run, wait until other work uses fewer cores than this",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=900, help="seconds to wait for that at most"
    )
    parser.add_argument(
        "--http", choices=sorted(TRANSPORTS), default="stdlib", help="the load generator's client"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--server-log", type=Path, help="append gunicorn's log (access log included) here"
    )
    args = parser.parse_args()
    # Stopped from outside (timeout, Ctrl-C), still stop gunicorn and drop the database.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    Player.transport = TRANSPORTS[args.http]

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
            worker=args.worker, log=args.server_log,
        ) as server:  # fmt: skip
            throughput, latency, service = measure(args, server)

    print()
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} cores, gunicorn "
        f"{args.workers} workers x {args.threads} threads (gthread), PostgreSQL, "
        f"broker {'Redis' if broker.url else 'embedded'}"
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
        args.json.write_text(
            json.dumps({"throughput": throughput, "latency": latency, "service": service}, indent=2)
        )


def measure(args, server: Server) -> tuple[list[dict], list[dict], dict | None]:
    """Run the parts asked for; return the runs of (a), of (b) and the costs of (c)."""
    tokens = _tokens(args.clients + args.lanes)
    names = [_username(t) for t in tokens]
    throughput, latency = [], []
    for repeat in range(args.repeats):
        if "a" in args.parts:
            wait_for_idle(busy_below=args.idle_below, timeout=args.idle_timeout)
            speed = calibrate()
            got = run_throughput(
                server.url, tokens[: args.clients], names[: args.clients], args.seconds,
                server,
            )  # fmt: skip
            got["calibration_ms"] = speed
            throughput.append(got)
            print(f"(a) run {repeat + 1}: {json.dumps(got)}", flush=True)
        if "b" in args.parts:
            wait_for_idle(busy_below=args.idle_below, timeout=args.idle_timeout)
            speed = calibrate()
            got = run_latency(
                server.url, tokens[args.clients :], names[args.clients :], args.rate,
                args.seconds, server,
            )  # fmt: skip
            got["calibration_ms"] = speed
            latency.append(got)
            print(f"(b) run {repeat + 1}: {json.dumps(got)}", flush=True)
    service = None
    if "c" in args.parts:
        wait_for_idle(busy_below=args.idle_below, timeout=args.idle_timeout)
        service = run_service_costs()
    return throughput, latency, service


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
