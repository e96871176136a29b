"""Live play at scale: thousands of open streams on the production server shape.

    python -m benchmarks.live [--streams 1000,5000,10000] [--seconds 15] [--clients 16]
                              [--wake-streams 1000] [--wake-matches 100] [--wake-moves 400]
                              [--idle-seconds 0] [--rounds 1] [--server fresh|kept]
                              [--holder process|thread] [--warmup 3] [--settle 0]
                              [--quiet-below 0.25] [--gc-stats] [--through-proxy]
                              [--shape bridge|split]

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

With ``--through-proxy`` every client (streams, players, probe) goes through nginx in
front of the server (``scripts/proxy``, docker/nginx/'s configuration, kept across the
server's restarts); the server's figures are still its own processes'. With ``--shape
split`` (and ``--through-proxy``) the server is two: streams and ``wait/`` on the uvicorn
workers above, the rest of the API on gunicorn's gthread workers (``cardserver.wsgi``,
``--workers`` processes of ``--threads`` threads), nginx sending each its routes
(``scripts/proxy --live-upstream``); the server's figures are both's.

Everything runs on this machine: the server, PostgreSQL, Redis and the load generator,
whose CPU use is reported beside the figures, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
from pathlib import Path

from benchmarks import harness
from benchmarks.api import Server, _tokens, _username
from benchmarks.api_load import Player, run_throughput
from benchmarks.edge import Proxy
from benchmarks.live_parts import held_clients, wake_latency
from benchmarks.live_report import report
from benchmarks.machine import own_cpu as _cpu
from benchmarks.stream_holder import HolderProcess, StreamHolder


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit on open files towards ``wanted``; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


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
    parser.add_argument(
        "--through-proxy", action="store_true",
        help="every client through nginx in front of the server (scripts/proxy)",
    )  # fmt: skip
    parser.add_argument(
        "--shape", choices=("bridge", "split"), default="bridge",
        help="bridge: one server for all (cardserver.asgi); split: streams on it, the rest "
        "on gthread workers (needs --through-proxy)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    parser.add_argument("--server-log", type=Path, help="append the server's log here")
    args = parser.parse_args()
    if args.shape == "split" and not args.through_proxy:
        parser.error("--shape split routes through nginx: add --through-proxy")
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
        ports = {"asgi": harness.free_port()}
        extra = {}
        if args.shape == "split":
            ports["gthread"] = harness.free_port()
            # As compose's api: cardserver/gunicorn.py's keep-alive (75 s), which outlasts
            # nginx's 60 s (gthread's former 2 s would close connections nginx reuses).
            # The probes find a server's processes by "127.0.0.1:PORT" in their command
            # lines (the uvicorn workers'): the API's carry it too, as their name.
            extra["gthread"] = ["--keep-alive", "75",
                                "--name", f"api-beside-127.0.0.1:{ports['asgi']}"]  # fmt: skip

        def new_server() -> Server:
            server = Server(
                env=env, database=database, workers=args.workers, threads=args.threads,
                worker=False, shapes=tuple(ports), log=args.server_log, extra=extra,
            )  # fmt: skip
            # Every server of the run on the same ports: the clients' URLs stay good.
            server.ports = dict(ports)
            server.port = ports["asgi"]
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
        self.proxy: Proxy | None = None

    def start(self) -> Server:
        """Start a new server (and nginx in front, the first time, with --through-proxy);
        its ``client_url`` is where the clients go."""
        self.stop()
        self.server = self.new_server().__enter__()
        self.started += 1
        if self.args.through_proxy and self.proxy is None:
            log = Path(tempfile.mkdtemp(prefix="live-proxy-")) / "access.log"
            ports = self.server.ports
            self.proxy = Proxy(f"127.0.0.1:{ports.get('gthread', ports['asgi'])}", log)
            self.proxy.command += ["--live-upstream", f"127.0.0.1:{ports['asgi']}"]
            self.proxy.__enter__()
        self.server.client_url = self.proxy.url if self.proxy else self.server.url
        self.holder = (HolderProcess if self.args.holder == "process" else StreamHolder)(
            self.proxy.port if self.proxy else self.server.port
        )
        return self.server

    def close(self) -> None:
        self.stop()
        if self.proxy is not None:
            self.proxy.__exit__()
            self.proxy = None

    def warm_up(self, players) -> None:
        if self.args.warmup:
            run_throughput(self.server.client_url, *players, self.args.warmup, self.server)

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
            player = Player(server.client_url, token, seed=5000 + index)
            player.new_match(_username(token))
            movers.append(player)
        matches = [player.match_id for player in movers]
        servers.warm_up(players)
        held, wake = [], None
        cpu0 = _cpu()
        if "a" in args.parts:
            # Each round: no streams, then each count (N = 0 is each round's yardstick).
            for index, (_round, n) in enumerate(harness.rounds(args.rounds, [0, *counts])):
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
            for player, token in zip(movers, mover_tokens, strict=True):
                player.http.close()  # reconnects to the server of the moment
                # A new match: a turn's time limit (60 s) ends one left waiting through a
                # long part (a), at its next move (its view still says active): after two
                # rounds at 10,000 streams, every one had, and no move was measured.
                player.new_match(_username(token))
            wake = wake_latency(server, servers.holder, movers, args.wake_streams,
                                args.wake_moves)  # fmt: skip
            print(f"(b) {json.dumps(wake)}", flush=True)
        for player in movers:
            player.http.close()
        generator_cpu = _cpu() - cpu0
    finally:
        servers.close()
    return {"held": held, "wake": wake, "generator_cpu": generator_cpu}


if __name__ == "__main__":
    main()
