"""Live play at scale: thousands of open streams on the production server shape.

    python -m benchmarks.live [--streams 1000,5000,10000] [--seconds 15] [--clients 16]
                              [--wake-streams 1000] [--wake-matches 100] [--wake-moves 400]
                              [--idle-seconds 0] [--rounds 1] [--server fresh|kept]
                              [--holder process|thread] [--warmup 3] [--settle 0]
                              [--quiet-below 0.25] [--gc-stats]

It starts gunicorn with uvicorn workers (``cardserver.asgi``, ``--workers`` processes)
on a fresh PostgreSQL database, wake-ups through Redis pub/sub (Redis database 14), the
caps on open streams and the rate limits off, raises this process's open-file limit
(its children, the server's processes, inherit it), and measures:

(a) **held clients**: for N = 0 (the baseline, same run) and each of ``--streams``, in
    turn, ``--rounds`` times, it opens N idle streams (raw sockets: SSE on spectated
    matches and account streams, half each) from a holder process of their own
    (``benchmarks.stream_holder``: real waiting clients are other programs, and a holder
    in this process would share its interpreter lock and garbage collector with the
    players), then lets ``--clients`` threads play their own matches as fast as they can
    for ``--seconds`` while a probe times a plain ``GET /api/v1/games/`` every 50 ms.
    The play starts once the server has done the streams' opening reads (it used under
    ``--quiet-below`` cores for a second): a stream is answered before its first read,
    and those reads are the cost of opening it, reported as ``drain_seconds``. Each N
    is measured on a server started for it (``--server fresh``, after ``--warmup``
    seconds of play): what one N's streams leave in the server's processes is not
    charged to the next N. Reported: moves/s and its ratio to the same round's
    N = 0, the GET's p50/p99, the server's CPU per move, the players', the holder's and
    other work's cores, and the server's memory per open stream (the rise of the
    resident memory of its processes, divided by N). With ``--idle-seconds S``, first
    the server's CPU over S seconds while it holds the N streams and nothing else
    happens: the streams' own cost. With ``--settle S``, S seconds of play, unmeasured,
    after the streams open. With ``--gc-stats``, the server's garbage collections
    during the play (``cardserver.gcstats``) and the commonest objects it holds. In the
    JSON lines (``(a) {...}``), what the "other work" was (``other_top``: the busiest
    processes not the benchmark's; ``machine_cores``: user, system, softirq, steal,
    idle), and the web processes' user and system CPU, minor faults per move and
    context switches per second.
(b) **wake-up latency**: ``--wake-streams`` SSE streams spread over ``--wake-matches``
    live matches; one client plays ``--wake-moves`` moves on them in turn, and for each
    move, the time from its 200 answer to the arrival of its event on every stream of
    that match. Reported: p50 and p99 (an event may arrive before the answer does:
    the server publishes at commit, before it sends the answer; such times count as 0).

Everything runs on this machine: the server, PostgreSQL, Redis and the load generator,
whose CPU use is reported beside the figures, with the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import tempfile
import threading
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.api import Server, _tokens, _username
from benchmarks.api_load import Player, StdlibTransport, run_throughput
from benchmarks.live_report import report
from benchmarks.machine import (
    busiest_since,
    cpu_since,
    every_process_cpu,
    machine_columns,
    process_counters,
)
from benchmarks.machine import own_cpu as _cpu
from benchmarks.machine import processes_cpu as _process_cpu
from benchmarks.stream_holder import HolderProcess, StreamHolder


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit on open files towards ``wanted``; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def server_rss_mb(port: int) -> float:
    """Resident memory (MB) of every process serving ``port`` (gunicorn and its workers)."""
    total = 0
    for pid in _process_cpu(f"127.0.0.1:{port}"):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


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


def held_clients(server: Server, holder, n: int, *, players, accounts, matches,
                 seconds: float, idle_seconds: float = 0, gc_dir: Path | None = None,
                 label: str = "", settle: float = 0,
                 quiet_below: float = 0.25) -> dict:  # fmt: skip
    """Part (a) for one N."""
    rss0 = server_rss_mb(server.port)
    specs = []
    for i in range(n):
        if i % 2:
            specs.append(("/api/v1/stream/events/", accounts[i % len(accounts)], None))
        else:
            specs.append((f"/api/v1/matches/{matches[i % len(matches)]}/stream/", None, None))
    started = time.perf_counter()
    holder.open(specs)
    open_s = time.perf_counter() - started
    drain_s, quiet_cores = wait_until_quiet(server.port, below=quiet_below, timeout=300)
    rss1 = server_rss_mb(server.port)
    objects = census(server, gc_dir, f"{label}-held")
    idle_cores = None
    if idle_seconds:
        # The streams' own cost, apart from the play's and from other work's: the server's
        # CPU while it only holds them (their keep-alives, its timers, the caps' heartbeat).
        cpu0 = sum(_process_cpu(f"127.0.0.1:{server.port}").values())
        time.sleep(idle_seconds)
        idle_cores = (sum(_process_cpu(f"127.0.0.1:{server.port}").values()) - cpu0) / idle_seconds
    tokens, names = players
    if settle:
        # Play, unmeasured: the streams just opened are young objects, which the garbage
        # collector walks as it promotes them, once per generation, at the first
        # collections after they opened: a cost of opening them, not of holding them.
        run_throughput(server.url, tokens, names, settle, server)
    stop, latencies = threading.Event(), []
    probe = threading.Thread(target=probe_games, args=(server.url, stop, latencies))
    gc0, holder_cpu0 = gc_totals(server, gc_dir), holder.cpu()
    probe.start()
    ours = {os.getpid(), *_process_cpu(server.database), *_process_cpu(f"127.0.0.1:{server.port}")}
    if getattr(holder, "process", None) is not None:
        ours.add(holder.process.pid)
    web_pids = list(_process_cpu(f"127.0.0.1:{server.port}"))
    every0, columns0 = every_process_cpu(), machine_columns()
    counters0, window0 = process_counters(web_pids), time.perf_counter()
    got = run_throughput(server.url, tokens, names, seconds, server)
    window = time.perf_counter() - window0
    counters1, columns1 = process_counters(web_pids), machine_columns()
    others = busiest_since(every0, window, exclude=ours)
    stop.set()
    probe.join()
    # Over the whole window (the players' start and end with it): per move, at its rate.
    moves = max(1.0, got["moves_per_s"] * window)
    gc1, holder_cpu1 = gc_totals(server, gc_dir), holder.cpu()
    held, failed = holder.counts()
    holder.close()
    return {
        "streams": n,
        "opened": held,
        "failed": failed,
        "open_seconds": open_s,
        # From the last stream's answer to the server's first quiet second (its opening
        # reads done), and that second's cores: the held streams' own cost.
        "drain_seconds": drain_s,
        "quiet_cores": quiet_cores,
        "moves_per_s": got["moves_per_s"],
        "get_p50_ms": percentile(latencies, 0.5),
        "get_p99_ms": percentile(latencies, 0.99),
        "gets": len(latencies),
        "rss_mb": rss1,
        "kb_per_stream": 1024 * (rss1 - rss0) / n if n else None,
        "idle_server_cores": idle_cores,
        # The players' and the probe's process (and the holder's, with --holder thread).
        "generator_cpu": got["generator_cpu"],
        # The holder process's cores over the play (with --holder process), about as long.
        "holder_cores": (holder_cpu1 - holder_cpu0) / seconds if holder_cpu0 is not None else None,
        "server_cpu_ms_per_move": got["cpu_ms_per_move"]["gunicorn"],
        "other_cores": got["other_cores"],
        # What the other work was: the busiest processes not the benchmark's (its server,
        # its database's backends, its players, its holder), and the machine's time in
        # the kernel's softirqs and stolen by the host (no process's).
        "other_top": others,
        "machine_cores": {
            kind: round((columns1[kind] - columns0[kind]) / window, 3)
            for kind in ("user", "system", "softirq", "steal", "idle")
        },
        # The web processes during the play: user and kernel CPU per move, minor page
        # faults per move, and switches per second (involuntary: preempted for a core).
        "server_per_move": {
            "user_ms": round(1000 * (counters1["user"] - counters0["user"]) / moves, 3),
            "system_ms": round(1000 * (counters1["system"] - counters0["system"]) / moves, 3),
            "minor_faults": round(
                (counters1["minor_faults"] - counters0["minor_faults"]) / moves, 1
            ),
        },
        "server_switches_per_s": {
            kind: round((counters1[kind] - counters0[kind]) / window)
            for kind in ("voluntary", "involuntary")
        },
        "load": os.getloadavg()[0],
        "gc": gc_since(gc0, gc1),
        "census": objects,
    }


def wake_latency(server: Server, holder, movers: list[Player], streams: int,
                 moves: int) -> dict:  # fmt: skip
    """Part (b)."""
    specs = [
        (f"/api/v1/matches/{movers[i % len(movers)].match_id}/stream/", None,
         movers[i % len(movers)].match_id)
        for i in range(streams)
    ]  # fmt: skip
    holder.open(specs)
    time.sleep(2)
    answered: dict[tuple[int, int], float] = {}
    live = list(movers)
    made = 0
    while made < moves and live:
        for player in list(live):
            view = player.view()
            status, body = player.move(view)
            now = time.monotonic()
            if status != 200:
                continue
            answered[(player.match_id, body["next_ply"])] = now
            made += 1
            if body["ended_match"]:
                live.remove(player)
            if made >= moves:
                break
    time.sleep(2)
    per_stream = streams // len(movers)
    latencies, missing = [], 0
    every = holder.take_arrivals()
    for key, at in answered.items():
        arrivals = every.get(key, [])
        missing += max(0, per_stream - len(arrivals))
        latencies.extend(max(0.0, 1000 * (t - at)) for t in arrivals)
    opened, _ = holder.counts()
    holder.close()
    return {
        "streams": streams,
        "opened": opened,
        "moves": made,
        "events": len(latencies),
        "missing_events": missing,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": max(latencies) if latencies else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1000,5000,10000")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--accounts", type=int, default=500)
    parser.add_argument("--wake-streams", type=int, default=1000)
    parser.add_argument("--wake-matches", type=int, default=100)
    parser.add_argument("--wake-moves", type=int, default=400)
    parser.add_argument("--parts", default="ab")
    parser.add_argument(
        "--idle-seconds", type=float, default=0,
        help="before the play, measure the server's CPU while it only holds the streams",
    )  # fmt: skip
    parser.add_argument(
        "--rounds", type=int, default=1,
        help="measure N = 0 and each of --streams, in turn, this many times",
    )  # fmt: skip
    parser.add_argument(
        "--server", choices=("fresh", "kept"), default="fresh",
        help="fresh: a new server for each N measured; kept: one server for the whole run",
    )  # fmt: skip
    parser.add_argument(
        "--holder", choices=("process", "thread"), default="process",
        help="hold the streams from a process of their own, or from a thread of this one",
    )  # fmt: skip
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of play, unmeasured, "
                        "on each new server")  # fmt: skip
    parser.add_argument(
        "--settle", type=float, default=0,
        help="seconds of play, unmeasured, after the streams are opened (each N, 0 too)",
    )  # fmt: skip
    parser.add_argument(
        "--quiet-below", type=float, default=0.25,
        help="after opening the streams, wait until the server uses fewer cores than this "
        "for a second (its opening reads done) before the play",
    )  # fmt: skip
    parser.add_argument(
        "--gc-stats",
        action="store_true",
        help="count the server's garbage collections (CARDSERVER_GC_STATS)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--server-log", type=Path, help="append the server's log here")
    args = parser.parse_args()
    counts = [int(n) for n in args.streams.split(",") if n]
    limit = raise_open_files(2 * max(counts + [args.wake_streams]) + 4096)
    unlimited = {
        "LIVE_MAX_STREAMS_PER_ACCOUNT": "0", "LIVE_MAX_STREAMS_PER_IP": "0",
        **{f"THROTTLE_{s}": "off" for s in ("ANON", "USER", "PLAY", "CREATE")},
        # Each play window leaves every player one match open: many rounds pass the cap.
        "MAX_OPEN_MATCHES_PER_USER": "1000000",
    }  # fmt: skip
    load0 = os.getloadavg()
    with (
        tempfile.TemporaryDirectory() as var_dir,
        harness.scratch_database() as database,
        # Wake-ups through Redis pub/sub: the broker's Redis (LIVE_PUBSUB_URL's default).
        harness.broker_queue(f"{harness.REDIS}/14", required=True) as broker,
    ):
        env = harness.environment(database=database, broker=broker, var_dir=Path(var_dir))
        env |= unlimited
        gc_dir = None
        if args.gc_stats:
            gc_dir = Path(var_dir) / "gc"
            gc_dir.mkdir()
            env["CARDSERVER_GC_STATS"] = str(gc_dir)
        harness.django_setup(env | {"CELERY_TASK_ALWAYS_EAGER": "0"})
        port = harness.free_port()

        def new_server() -> Server:
            server = Server(
                env=env, database=database, workers=args.workers, threads=args.threads,
                worker=False, shapes=("asgi",), log=args.server_log,
            )  # fmt: skip
            # Every server of the run on one port: the clients' URLs stay good.
            server.ports = {"asgi": port}
            server.port = port
            return server

        figures = run_parts(args, new_server, counts, gc_dir)
    load1 = os.getloadavg()
    report(args, figures, limit, load0, load1)


class Servers:
    """The server of the moment, the streams' holder beside it, and the players' matches.

    With ``--server fresh`` each N is measured on a server started for it: what one N's
    streams leave behind in the server's processes (a grown heap, closing work still
    running, the allocator's freed memory) is not measured as the next N's cost.
    """

    def __init__(self, args, new_server, gc_dir: Path | None) -> None:
        self.args, self.new_server, self.gc_dir = args, new_server, gc_dir
        self.server: Server | None = None
        self.holder = None
        self.started = 0

    def start(self) -> Server:
        self.stop()
        self.server = self.new_server().__enter__()
        self.started += 1
        self.holder = (HolderProcess if self.args.holder == "process" else StreamHolder)(
            self.server.port
        )
        return self.server

    def warm_up(self, players) -> None:
        if self.args.warmup:
            run_throughput(self.server.url, *players, self.args.warmup, self.server)

    def stop(self) -> None:
        if self.holder is not None:
            self.holder.stop()
            self.holder = None
        if self.server is not None:
            self.server.__exit__()
            self.server = None


def run_parts(args, new_server, counts: list[int], gc_dir: Path | None) -> dict:
    """Parts (a) and (b); return their figures."""
    tokens = _tokens(args.clients + args.wake_matches + args.accounts)
    players = (tokens[: args.clients], [_username(t) for t in tokens[: args.clients]])
    mover_tokens = tokens[args.clients : args.clients + args.wake_matches]
    accounts = tokens[args.clients + args.wake_matches :]
    servers = Servers(args, new_server, gc_dir)
    server = servers.start()
    try:
        movers = []
        for index, token in enumerate(mover_tokens):
            player = Player(server.url, token, seed=5000 + index)
            player.new_match(_username(token))
            movers.append(player)
        matches = [player.match_id for player in movers]
        servers.warm_up(players)
        held, wake = [], None
        cpu0 = _cpu()
        if "a" in args.parts:
            for index, n in enumerate([0, *counts] * args.rounds):
                if index and args.server == "fresh":
                    server = servers.start()
                    servers.warm_up(players)
                got = held_clients(server, servers.holder, n, players=players,
                                   accounts=accounts, matches=matches, seconds=args.seconds,
                                   idle_seconds=args.idle_seconds, gc_dir=gc_dir,
                                   label=f"{index}", settle=args.settle,
                                   quiet_below=args.quiet_below)  # fmt: skip
                got["round"] = index // (len(counts) + 1)
                got["server"] = servers.started
                held.append(got)
                print(f"(a) {json.dumps(got)}", flush=True)
        if "b" in args.parts:
            if held and args.server == "fresh":
                server = servers.start()
            for player in movers:
                player.http.close()  # reconnects to the server of the moment
            wake = wake_latency(server, servers.holder, movers, args.wake_streams,
                                args.wake_moves)  # fmt: skip
            print(f"(b) {json.dumps(wake)}", flush=True)
        for player in movers:
            player.http.close()
        generator_cpu = _cpu() - cpu0
    finally:
        servers.stop()
    return {"held": held, "wake": wake, "generator_cpu": generator_cpu}


if __name__ == "__main__":
    main()
