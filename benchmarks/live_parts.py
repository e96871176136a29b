"""The two parts ``benchmarks.live`` measures: (a) play with N streams held open
(``held_clients``), (b) how soon a move reaches the streams watching it
(``wake_latency``)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from benchmarks.api import Server
from benchmarks.api_load import Player, run_throughput
from benchmarks.live_probes import (
    census,
    gc_since,
    gc_totals,
    percentile,
    probe_games,
    server_rss_mb,
    wait_until_quiet,
)
from benchmarks.machine import (
    busiest_since,
    every_process_cpu,
    machine_columns,
    process_counters,
)
from benchmarks.machine import processes_cpu as _process_cpu


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
        run_throughput(server.client_url, tokens, names, settle, server)
    stop, latencies = threading.Event(), []
    probe = threading.Thread(target=probe_games, args=(server.client_url, stop, latencies))
    gc0, holder_cpu0 = gc_totals(server, gc_dir), holder.cpu()
    probe.start()
    ours = {os.getpid(), *_process_cpu(server.database), *_process_cpu(f"127.0.0.1:{server.port}")}
    if getattr(holder, "process", None) is not None:
        ours.add(holder.process.pid)
    web_pids = list(_process_cpu(f"127.0.0.1:{server.port}"))
    every0, columns0 = every_process_cpu(), machine_columns()
    counters0, window0 = process_counters(web_pids), time.perf_counter()
    got = run_throughput(server.client_url, tokens, names, seconds, server)
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
            if view["status"] != "active":
                # Ended while part (a) ran (a turn's time limit): its streams see no more.
                live.remove(player)
                continue
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
