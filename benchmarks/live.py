"""Live play at scale: thousands of open streams on the production server shape.

    python -m benchmarks.live [--streams 1000,5000,10000] [--seconds 15] [--clients 16]
                              [--wake-streams 1000] [--wake-matches 100] [--wake-moves 400]
                              [--idle-seconds 0]

It starts gunicorn with uvicorn workers (``cardserver.asgi``, ``--workers`` processes)
on a fresh PostgreSQL database, wake-ups through Redis pub/sub (Redis database 14), the
caps on open streams and the rate limits off, raises this process's open-file limit
(its children, the server's processes, inherit it), and measures:

(a) **held clients**: for N = 0 (the baseline, same run) and each of ``--streams``, it
    opens N idle streams from one asyncio client (raw sockets: SSE on spectated matches
    and account streams, half each), then lets ``--clients`` threads play their own
    matches as fast as they can for ``--seconds`` while a probe times a plain
    ``GET /api/v1/games/`` every 50 ms. Reported: moves/s (and its ratio to N = 0), the
    GET's p50/p99, and the server's memory per open stream (the rise of the resident
    memory of its processes, divided by N). With ``--idle-seconds S``, first the server's
    CPU over S seconds while it holds the N streams and nothing else happens: the
    streams' own cost, which other work on the machine does not blur as it blurs moves/s.
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
import asyncio
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
from benchmarks.machine import own_cpu as _cpu
from benchmarks.machine import processes_cpu as _process_cpu


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


class StreamHolder:
    """Open streams from one asyncio loop in a thread of its own; note their events."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tasks: list[asyncio.Task] = []
        self.opened = 0
        self.failed = 0
        # (match id, ply) -> arrival times, one per stream of the match.
        self.arrivals: dict[tuple[int, int], list[float]] = {}

    def run(self, coroutine, timeout: float = 3600):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _stream(self, path: str, token: str | None, match_id: int | None,
                      opened: asyncio.Semaphore) -> None:  # fmt: skip
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            self.failed += 1
            opened.release()
            return
        auth = f"Authorization: Token {token}\r\n" if token else ""
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
            f"{auth}\r\n".encode()
        )
        try:
            status = await reader.readline()
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            if b" 200 " not in status:
                self.failed += 1
                return
            self.opened += 1
            opened.release()
            seen: set[int] = set()
            while True:
                line = await reader.readline()
                if not line:
                    return
                if match_id is not None and line.startswith(b"id: "):
                    ply = int(line[4:])
                    if ply not in seen:
                        seen.add(ply)
                        self.arrivals.setdefault((match_id, ply), []).append(time.monotonic())
        except (OSError, asyncio.IncompleteReadError, ValueError):
            self.failed += 1
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()

    async def _open(self, specs: list[tuple[str, str | None, int | None]], parallel: int) -> None:
        gate = asyncio.Semaphore(parallel)
        for path, token, match_id in specs:
            await gate.acquire()
            self.tasks.append(asyncio.create_task(self._stream(path, token, match_id, gate)))
        for _ in range(parallel):  # every open answered (or failed)
            await gate.acquire()

    def open(self, specs: list[tuple[str, str | None, int | None]], parallel: int = 200) -> None:
        self.run(self._open(specs, parallel))

    async def _close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()
        self.opened = 0

    def close(self) -> None:
        self.run(self._close())
        self.arrivals.clear()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


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


def held_clients(server: Server, holder: StreamHolder, n: int, *, players, accounts, matches,
                 seconds: float, idle_seconds: float = 0) -> dict:  # fmt: skip
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
    time.sleep(2)
    rss1 = server_rss_mb(server.port)
    idle_cores = None
    if idle_seconds:
        # The streams' own cost, apart from the play's and from other work's: the server's
        # CPU while it only holds them (their keep-alives, its timers, the caps' heartbeat).
        cpu0 = sum(_process_cpu(f"127.0.0.1:{server.port}").values())
        time.sleep(idle_seconds)
        idle_cores = (sum(_process_cpu(f"127.0.0.1:{server.port}").values()) - cpu0) / idle_seconds
    stop, latencies = threading.Event(), []
    probe = threading.Thread(target=probe_games, args=(server.url, stop, latencies))
    probe.start()
    tokens, names = players
    got = run_throughput(server.url, tokens, names, seconds, server)
    stop.set()
    probe.join()
    held = holder.opened
    holder.close()
    return {
        "streams": n,
        "opened": held,
        "failed": holder.failed,
        "open_seconds": open_s,
        "moves_per_s": got["moves_per_s"],
        "get_p50_ms": percentile(latencies, 0.5),
        "get_p99_ms": percentile(latencies, 0.99),
        "gets": len(latencies),
        "rss_mb": rss1,
        "kb_per_stream": 1024 * (rss1 - rss0) / n if n else None,
        "idle_server_cores": idle_cores,
        "generator_cpu": got["generator_cpu"],
        "server_cpu_ms_per_move": got["cpu_ms_per_move"]["gunicorn"],
        "other_cores": got["other_cores"],
    }


def wake_latency(server: Server, holder: StreamHolder, movers: list[Player], streams: int,
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
    for key, at in answered.items():
        arrivals = holder.arrivals.get(key, [])
        missing += max(0, per_stream - len(arrivals))
        latencies.extend(max(0.0, 1000 * (t - at)) for t in arrivals)
    opened = holder.opened
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
    parser.add_argument("--json", type=Path)
    parser.add_argument("--server-log", type=Path, help="append the server's log here")
    args = parser.parse_args()
    counts = [int(n) for n in args.streams.split(",") if n]
    limit = raise_open_files(2 * max(counts + [args.wake_streams]) + 4096)
    unlimited = {
        "LIVE_MAX_STREAMS_PER_ACCOUNT": "0", "LIVE_MAX_STREAMS_PER_IP": "0",
        **{f"THROTTLE_{s}": "off" for s in ("ANON", "USER", "PLAY", "CREATE")},
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
        harness.django_setup(env | {"CELERY_TASK_ALWAYS_EAGER": "0"})
        server = Server(
            env=env, database=database, workers=args.workers, threads=args.threads,
            worker=False, shapes=("asgi",), log=args.server_log,
        )  # fmt: skip
        with server:
            figures = run_parts(args, server, counts)
    load1 = os.getloadavg()
    report(args, figures, limit, load0, load1)


def run_parts(args, server: Server, counts: list[int]) -> dict:
    """Parts (a) and (b) on the running server; return their figures."""
    tokens = _tokens(args.clients + args.wake_matches + args.accounts)
    players = (tokens[: args.clients], [_username(t) for t in tokens[: args.clients]])
    mover_tokens = tokens[args.clients : args.clients + args.wake_matches]
    accounts = tokens[args.clients + args.wake_matches :]
    movers = []
    for index, token in enumerate(mover_tokens):
        player = Player(server.url, token, seed=5000 + index)
        player.new_match(_username(token))
        movers.append(player)
    matches = [player.match_id for player in movers]
    holder = StreamHolder(server.port)
    held, wake = [], None
    cpu0 = _cpu()
    if "a" in args.parts:
        for n in [0, *counts]:
            got = held_clients(server, holder, n, players=players, accounts=accounts,
                               matches=matches, seconds=args.seconds,
                               idle_seconds=args.idle_seconds)  # fmt: skip
            held.append(got)
            print(f"(a) {json.dumps(got)}", flush=True)
    if "b" in args.parts:
        wake = wake_latency(server, holder, movers, args.wake_streams, args.wake_moves)
        print(f"(b) {json.dumps(wake)}", flush=True)
    holder.stop()
    for player in movers:
        player.http.close()
    generator_cpu = _cpu() - cpu0
    return {"held": held, "wake": wake, "generator_cpu": generator_cpu}


def report(args, figures: dict, limit: int, load0, load1) -> None:
    held, wake, generator_cpu = figures["held"], figures["wake"], figures["generator_cpu"]
    print()
    print(
        f"{os.cpu_count()} cores, gunicorn {args.workers} uvicorn workers, PostgreSQL, Redis "
        f"pub/sub; open-file limit {limit}; load average {load0[0]:.1f} at the start, "
        f"{load1[0]:.1f} at the end; load generator CPU {generator_cpu:.0f} s in all"
    )
    if held:
        base = held[0]["moves_per_s"] or float("nan")
        print(
            "(a) streams  opened  moves/s  (vs 0)  GET p50 ms  GET p99 ms  KB/stream  RSS MB"
            "  server ms/move  generator cores  other work cores"
        )
        for row in held:
            per = row["kb_per_stream"]
            print(
                f"    {row['streams']:>7}  {row['opened']:>6}  {row['moves_per_s']:7.1f}  "
                f"{row['moves_per_s'] / base:6.0%}  {row['get_p50_ms']:10.1f}  "
                f"{row['get_p99_ms']:10.1f}  {per if per is None else round(per, 1)!s:>9}  "
                f"{row['rss_mb']:6.0f}  {row['server_cpu_ms_per_move']:14.2f}  "
                f"{row['generator_cpu']:15.2f}  {row['other_cores']:16.2f}"
            )
        print("    targets at 10,000: GET p99 < 50 ms, moves/s >= 90% of 0 streams")
        for row in held:
            if row["idle_server_cores"] is not None:
                print(
                    f"    {row['streams']:>7} streams held, no play: the server used "
                    f"{row['idle_server_cores']:.3f} cores ({args.idle_seconds:g} s)"
                )
    if wake:
        print(
            f"(b) {wake['streams']} streams on {args.wake_matches} matches, {wake['moves']} "
            f"moves, {wake['events']} events ({wake['missing_events']} missing): wake-up p50 "
            f"{wake['p50_ms']:.1f} ms, p99 {wake['p99_ms']:.1f} ms, max {wake['max_ms']:.1f} ms"
            "   target p99 < 100 ms"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
