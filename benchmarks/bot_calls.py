"""HTTP bots waited on at once: matches between HTTP bots that each take a second to answer.

    python -m benchmarks.bot_calls [--matches 100,1000] [--delay 1.0] [--window 30]
                                   [--calls-workers 1] [--calls-threads 8] [--inline]
    python -m benchmarks.bot_calls --caller 6000 [--delay 0.02]
    python -m benchmarks.bot_calls --matches 200 --window 30 --profile var/profile
    python -m benchmarks.bot_calls --matches 200 --window 30 --baseline-ref main --rounds 3 \
                                   [--lock /tmp/bench.lock] [--db-prefix cardserver_]

Creates a scratch PostgreSQL database (``--server``; dropped afterwards) and uses a Redis
database as the broker (``--broker``, default database 12) with queues of its own
(``benchmarks.harness``). Starts an asyncio bot server on 127.0.0.1 (its own process: raw
HTTP/1.1 with keep-alive, every bot on its own path) that answers each move request with
the first legal move after ``--delay`` seconds, a CPU worker (prefork, 2 processes, as
docker/compose.yaml) and ``--calls-workers`` bot-calls workers (as docker/compose.yaml: a
Celery thread pool of ``--calls-threads`` that hands each call to the process's event
loop; a tree before the event loop waited for each call on one of those threads, so it
needs ``--calls-threads 1000``). The workers run with DEBUG off, as in production. For
each count of ``--matches`` it starts that many 2-player Durak matches between two HTTP
bots at once, waits until each has made its first two moves (at most ``--warmup``
seconds), lets them play for ``--window`` seconds, and reports:

- turns per second completed in the window (moves logged);
- bot calls in flight at once, as the bot server counts them every 50 ms: median and
  maximum over the window;
- dispatch delay: from a turn starting (the move before it logged, or the match
  started) to its request sent (``Move.sent_at``), p50 and p99 over the window's moves;
- the workers' memory (resident set of each worker's processes, summed) at the end, and
  the CPU time per turn completed in the window (ms) of each process a turn costs: the
  workers, the PostgreSQL backends of the scratch database, the bot server, Redis (the
  whole server, which others may use too), the benchmark itself, and their total;
- the round trips a turn (``benchmarks.probe``, counted inside the workers): SQL
  statements, transactions (each two round trips more: BEGIN and COMMIT), the round trips
  to PostgreSQL those make, Redis commands (a pipeline or a script is one), and the CPU
  time of the workers' garbage collections (``gc_us``, microseconds);
- the matches forfeited by the end of the run, by reason (none should be: a bot's time
  runs from its request sent, so the arena's delay never makes it lose on time).

With ``--profile DIR`` py-spy records the bot-calls worker through the window
(``DIR/bot-calls.svg``, a flame graph of the threads holding the GIL, so of the Python
CPU time; py-spy is in the ``dev`` extra). With ``--baseline-ref REF`` the run is
repeated ``--rounds`` times for this tree and for ``REF``'s (``benchmarks.baseline``: the
same benchmark code on both, rounds taking turns) and the medians, ranges and ratios of
the figures are reported; with ``--lock FILE`` each round (or the one run) holds an
exclusive flock on FILE, as ``flock -x FILE`` would, so that the other benchmarks of a
shared machine wait for one round, not for all of them. ``--db-prefix`` starts the
scratch database's name (``cardserver_bench_...`` by default).

With ``--inline`` the calls are made by the CPU worker's processes as before the I/O
pool (``BOTS_CALL_QUEUE=-``): the baseline. With ``--pool-only N`` no match is played:
N calls are put on the call queue at once and the bot-calls worker alone is measured
(calls in flight, its memory), which shows the pool's capacity apart from the CPU side.
The owner's share of calls is lifted (``BOTS_CALLS_PER_OWNER``) so that it does not
bound the figure. With ``--caller N`` there is no database, broker or worker: this
process makes N calls with ``cardkit.caller.AsyncBotCaller`` on its own event loop (300 at
once, to 300 bots of the bot server, whose connections are made before the count
starts) and reports the caller's CPU time per call: the HTTP side of a turn alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import time
import uuid
from pathlib import Path
from tempfile import mkdtemp

from benchmarks import harness, machine, probe
from benchmarks.slow_bots import bot_server_start

# -- the run --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", default="100,1000", help="Concurrent match counts.")
    parser.add_argument("--delay", type=float, default=1.0, help="Seconds a bot thinks.")
    parser.add_argument("--window", type=float, default=30.0, help="Seconds measured.")
    parser.add_argument("--warmup", type=float, default=120.0, help="Longest warm-up, s.")
    parser.add_argument("--calls-workers", type=int, default=1, help="bot-calls processes.")
    parser.add_argument("--calls-threads", type=int, default=8)
    parser.add_argument("--inline", action="store_true", help="Calls made by the CPU worker.")
    parser.add_argument("--pool-only", type=int, default=0, help="Calls queued at once.")
    parser.add_argument("--caller", type=int, default=0, help="Calls made in this process.")
    parser.add_argument("--server", default=harness.POSTGRES)
    parser.add_argument("--broker", default=f"{harness.REDIS}/12")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--profile", type=Path, help="py-spy's flame graph of bot-calls here")
    parser.add_argument("--baseline-ref", help="also run REF's tree, rounds taking turns")
    parser.add_argument("--rounds", type=int, default=3, help="rounds a tree (baseline)")
    parser.add_argument("--lock", type=Path, help="each round holds an flock on this file")
    parser.add_argument("--db-prefix", default="cardserver_", help="scratch database's name")
    options = parser.parse_args()
    if options.baseline_ref:
        from benchmarks import baseline

        args = baseline.args_without_baseline()
        baseline.compare(options.baseline_ref, options.rounds, args, lock=options.lock)
        return
    if options.caller:
        caller_run(options)
        return
    name = f"{options.db_prefix}bench_{uuid.uuid4().hex[:8]}"
    with (
        harness.bench_lock(options.lock),
        harness.scratch_database(options.server, name=name) as database,
        harness.broker_queue(options.broker, required=True) as broker,
    ):
        env = harness.environment(database=database, broker=broker, var_dir=Path(mkdtemp()))
        # The owner's share is lifted so that it does not bound the figure.
        env |= {"BOTS_CALLS_PER_OWNER": "1000000", "BOTS_ALLOW_PRIVATE_URLS": "1", "DEBUG": "0",
                "SECRET_KEY": "benchmark-only-" + uuid.uuid4().hex}  # fmt: skip
        if options.inline:
            env["BOTS_CALL_QUEUE"] = "-"
        harness.django_setup(env)
        figures = run(options, broker)
        harness.write_json(options.json, figures)


def run(options, broker) -> dict:
    server, port, in_flight = bot_server_start(options.delay)
    print(
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; PostgreSQL, Redis; bots answer "
        f"after {options.delay:g} s; calls {'inline' if options.inline else 'on the I/O pool'}"
    )
    figures: dict = {"inline": options.inline, "delay": options.delay, "runs": {}}
    try:
        if options.pool_only:
            figures["pool_only"] = pool_only_run(options, broker, port, in_flight)
            return figures
        for count in [int(n) for n in options.matches.split(",")]:
            figures["runs"][count] = one_run(options, broker, port, count, in_flight, server.pid)
    finally:
        server.kill()
    return figures


def one_run(options, broker, port: int, count: int, in_flight, server_pid: int) -> dict:
    from django.contrib.auth import get_user_model

    from bots.models import Bot
    from games.models import Match, Move
    from games.seating import SeatHolder
    from games.services import match_create

    queue = broker.queue
    _empty(broker)
    tag = uuid.uuid4().hex[:6]
    owner = get_user_model().objects.create_user(f"bench-{tag}")
    bots = Bot.objects.bulk_create(
        Bot(
            name=f"b{tag}-{i}", owner=owner, kind="http", games=["durak"], secret="s",
            url=f"http://127.0.0.1:{port}/b/{tag}/{i}",
        )
        for i in range(2 * count)
    )  # fmt: skip
    probe_dir = Path(mkdtemp())
    workers = {"cpu": [_start_worker(queue, "cpu", 2, probe_dir)]}
    if not options.inline:
        workers["bot-calls"] = [
            _start_worker(f"{queue}-bot-calls", f"calls{i}", options.calls_threads, probe_dir)
            for i in range(options.calls_workers)
        ]
    time.sleep(8)  # the workers connect and are ready
    try:
        started = time.monotonic()
        matches = [
            match_create(
                creator=owner, game="durak", players=2, move_time_limit=30.0,
                seats=[SeatHolder(bot=bots[2 * i]), SeatHolder(bot=bots[2 * i + 1])],
            ).pk
            for i in range(count)
        ]  # fmt: skip
        created = time.monotonic() - started
        from django.utils import timezone

        # Warm-up: the window opens once every match has made its first two moves (or after
        # --warmup seconds), so that it measures play, not the start of 1,000 matches: by
        # then both bots of each match have been called and hold a kept-alive connection.
        warm_until = time.monotonic() + options.warmup
        while time.monotonic() < warm_until:
            if Match.objects.filter(pk__in=matches, ply__lt=2, status="active").count() == 0:
                break
            time.sleep(0.5)
        warmed = time.monotonic() - started - created
        # A profiler attached to a worker can start at this line.
        print(f"{count} matches: the window opens", flush=True)
        window_start = timezone.now()
        profiler = probe.profile_start(options.profile, options.window, workers.get("bot-calls"))
        trips_before = probe.read(probe_dir)
        cpu_before = {name: machine.group_cpu_s(group) for name, group in workers.items()}
        others = OtherProcesses(server_pid)
        samples = []
        end = time.monotonic() + options.window
        while time.monotonic() < end:
            samples.append(in_flight.value)
            if len(samples) % 20 == 0:
                others.sample()
            time.sleep(0.05)
        window_end = timezone.now()
        cpu = {
            name: machine.group_cpu_s(group) - cpu_before[name] for name, group in workers.items()
        }
        cpu |= others.sample()
        trips_after = probe.read(probe_dir)
        memory = {
            name: sum(machine.group_rss_mib(w.pid) for w in group)
            for name, group in workers.items()
        }
        # Answers of the window still on their way to the CPU worker are recorded.
        time.sleep(5)
        probe.profile_end(profiler)
    finally:
        for group in workers.values():
            for worker in group:
                harness.stop_process_group(worker)
    moves = list(
        Move.objects.filter(match_id__in=matches, received_at__gte=window_start,
                            received_at__lt=window_end)
        .values_list("match_id", "ply", "sent_at", "received_at")
    )  # fmt: skip
    turns = len(moves)
    before = {
        (m, p): r for m, p, _, r in Move.objects.filter(match_id__in=matches).values_list(
            "match_id", "ply", "sent_at", "received_at")
    }  # fmt: skip
    starts = dict(Match.objects.filter(pk__in=matches).values_list("pk", "started_at"))
    delays = []
    for match_id, ply, sent_at, _received in moves:
        if sent_at is None:
            continue
        turn_start = starts[match_id] if ply == 0 else before.get((match_id, ply - 1))
        if turn_start is not None:
            delays.append((sent_at - turn_start).total_seconds() * 1000)
    delays.sort()
    # A seat forfeited by the end (the arena's delay is never the bot's time: none should
    # be on time), by reason.
    forfeits: dict[str, int] = {}
    for reason in Match.objects.filter(pk__in=matches, forfeit_seat__isnull=False).values_list(
        "end_reason", flat=True
    ):
        forfeits[reason] = forfeits.get(reason, 0) + 1
    Match.objects.filter(pk__in=matches, status="active").update(status="aborted")
    result = {
        "matches": count,
        "created_in_s": round(created, 1),
        "warmup_s": round(warmed, 1),
        "turns_per_s": round(turns / options.window, 1),
        "in_flight_median": statistics.median(samples) if samples else 0,
        "in_flight_max": max(samples) if samples else 0,
        "dispatch_ms_p50": round(_quantile(delays, 0.5), 1) if delays else None,
        "dispatch_ms_p99": round(_quantile(delays, 0.99), 1) if delays else None,
        "worker_rss_mib": {name: round(mib, 1) for name, mib in memory.items()},
        "cpu_ms_per_turn": {
            name: round(1000 * seconds / turns, 2) if turns else None
            for name, seconds in (cpu | {"total": sum(cpu.values())}).items()
        },
        "per_turn": probe.per_turn(trips_before, trips_after, turns),
        "forfeits": forfeits,
        "load": round(os.getloadavg()[0], 1),
    }
    print(
        f"{count} matches (created in {created:.1f} s, warm-up {warmed:.0f} s): "
        f"{result['turns_per_s']} turns/s; "
        f"calls in flight median {result['in_flight_median']}, max {result['in_flight_max']}; "
        f"dispatch delay p50 {result['dispatch_ms_p50']} ms, p99 {result['dispatch_ms_p99']} "
        f"ms; worker RSS {result['worker_rss_mib']} MiB; CPU a turn "
        f"{result['cpu_ms_per_turn']} ms; a turn {result['per_turn']}; forfeits "
        f"{forfeits or 'none'}; load {result['load']}"
    )
    return result


def pool_only_run(options, broker, port: int, in_flight) -> dict:
    """Queue ``--pool-only`` calls at once, each to a bot of its own; sample in flight."""
    from bots.tasks import bot_call
    from cardkit.engine import load_game
    from cardkit.protocol import build_request

    calls_queue = f"{broker.queue}-bot-calls"
    _empty(broker)
    state = load_game("durak", players=2).deal(seed=1, dealer=0)
    from datetime import UTC, datetime

    payload = build_request(
        match_id=1, game="durak", options={"players": 2, "deck_size": 36}, seat=state.to_move,
        view=state.view(state.to_move), legal_moves=state.legal_moves(),
        deadline=datetime.now(UTC), time_limit=30.0,
    )  # fmt: skip
    worker = _start_worker(calls_queue, "calls", options.calls_threads)
    time.sleep(8)
    try:
        started = time.monotonic()
        for i in range(options.pool_only):
            bot_call.apply_async(
                # A call for no match: the pool finds no claim to record its answer on.
                ({"url": f"http://127.0.0.1:{port}/p/{i}", "secret": "s", "payload": payload,
                  "time_limit": 30.0, "send_by": None, "match_id": -i, "ply": 0, "seat": 0,
                  "bot_id": 0, "owner_id": 0, "holder": "bench", "queued_at": time.time(),
                  "recovers": False},),
                queue=calls_queue,
            )  # fmt: skip
        queued = time.monotonic() - started
        samples = []
        end = time.monotonic() + options.window
        while time.monotonic() < end:
            samples.append(in_flight.value)
            time.sleep(0.05)
        memory = machine.group_rss_mib(worker.pid)
    finally:
        harness.stop_process_group(worker)
        _empty(broker)
    result = {
        "calls": options.pool_only,
        "queued_in_s": round(queued, 1),
        "in_flight_median": statistics.median(samples),
        "in_flight_max": max(samples),
        "worker_rss_mib": memory,
        "load": round(os.getloadavg()[0], 1),
    }
    print(
        f"{options.pool_only} calls queued in {queued:.1f} s: in flight median "
        f"{result['in_flight_median']}, max {result['in_flight_max']} (bots answer after "
        f"{options.delay:g} s); bot-calls worker RSS {memory} MiB; load {result['load']}"
    )
    return result


def caller_run(options, at_once: int = 300) -> dict:
    """Make ``--caller`` calls from this process's event loop; print the CPU a call."""
    from datetime import UTC, datetime

    import uvloop

    from cardkit.caller import AsyncBotCaller
    from cardkit.engine import load_game
    from cardkit.protocol import build_request

    server, port, in_flight = bot_server_start(options.delay)
    state = load_game("durak", players=2).deal(seed=1, dealer=0)
    payload = build_request(
        match_id=1, game="durak", options={"players": 2, "deck_size": 36}, seat=state.to_move,
        view=state.view(state.to_move), legal_moves=state.legal_moves(),
        deadline=datetime.now(UTC), time_limit=30.0,
    )  # fmt: skip

    async def calls() -> tuple[float, float]:
        caller = AsyncBotCaller(allow_private=True)
        gate = asyncio.Semaphore(at_once)

        async def one(i: int) -> None:
            async with gate:
                url = f"http://127.0.0.1:{port}/c/{i % at_once}"
                answer = await caller.request_move(url, "s", payload, 30.0)
                assert answer.ok, answer

        await asyncio.gather(*(one(i) for i in range(at_once)))
        started, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*(one(i) for i in range(options.caller)))
        return time.monotonic() - started, time.process_time() - cpu

    load = os.getloadavg()[0]
    try:
        wall, cpu = uvloop.run(calls())
    finally:
        server.kill()
    result = {
        "calls": options.caller,
        "calls_per_s": round(options.caller / wall),
        "cpu_ms_per_call": round(1000 * cpu / options.caller, 3),
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
    }
    print(
        f"{options.caller} calls, {at_once} at once, bots answer after {options.delay:g} s: "
        f"{result['calls_per_s']} calls/s, the caller's CPU {result['cpu_ms_per_call']} ms a "
        f"call; load {result['load'][0]} -> {result['load'][1]}"
    )
    return result


def _quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def _start_worker(queue: str, name: str, concurrency: int, probe_dir: Path | None = None):
    pool = "prefork" if name == "cpu" else "threads"
    node = f"{name}-{queue}@{socket.gethostname()}"
    command = harness.celery_worker(node=node, pool=pool, concurrency=concurrency)
    queues = harness.cpu_queues(queue) if name == "cpu" else queue
    if probe_dir is None:
        return harness.start([*command, "-Q", queues], env={})
    # benchmarks.probe counts the worker's round trips (it changes none of its code).
    return harness.start(
        [*command, "-Q", queues, "--include", "benchmarks.probe"],
        env={"BENCH_PROBE_DIR": str(probe_dir)},
    )


def _empty(broker) -> None:
    """Drop what waits in the run's queues: its CPU queue and its call queue."""
    import redis

    redis.Redis.from_url(broker.url).delete(broker.queue, f"{broker.queue}-bot-calls")


class OtherProcesses:
    """The CPU time of the other processes a turn costs: this database's PostgreSQL
    backends (those that came and went during the window too: a worker's connection
    lives CONN_MAX_AGE seconds), the bot server, Redis (the whole server, which others may
    use too) and this process."""

    def __init__(self, server_pid: int) -> None:
        self.fixed = {
            "bot server": [server_pid], "redis": machine.redis_pids(), "benchmark": [os.getpid()]
        }  # fmt: skip
        # pid -> (CPU seconds when first seen, when last seen); a backend first seen during
        # the window started during it.
        self.backends: dict[int, list[float]] = {}
        self.start = {name: machine.pids_cpu_s(pids) for name, pids in self.fixed.items()}
        self._backends_read(first=True)

    def _backends_read(self, *, first: bool = False) -> None:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )
            for (pid,) in cursor.fetchall():
                used = machine.pids_cpu_s([pid])
                seen = self.backends.setdefault(pid, [used if first else 0.0, used])
                seen[1] = max(seen[1], used)

    def sample(self) -> dict[str, float]:
        """Read the backends again; return each group's CPU seconds since the start."""
        self._backends_read()
        used = {
            name: machine.pids_cpu_s(pids) - self.start[name] for name, pids in self.fixed.items()
        }
        used["postgres"] = sum(last - first for first, last in self.backends.values())
        return used


if __name__ == "__main__":
    main()
