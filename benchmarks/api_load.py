"""The API benchmark's load: clients playing Durak over HTTP, parts (a) and (b).

Each client is a thread with one kept-alive connection, through http.client (a third of
httpx's CPU per request) or httpx; each plays its own 2-player Durak match in which its
user holds both seats. ``run_throughput`` is part (a), every client as fast as it can;
``run_latency`` part (b), moves due on a fixed schedule. See ``benchmarks.api``.
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import threading
import time
from typing import Protocol

import httpx

from benchmarks import machine


class Server(Protocol):
    """What the load needs of ``benchmarks.api.Server``, whose CPU it counts: its port
    and its database's name. A protocol, not an import: ``benchmarks.api`` runs this
    module, never the reverse."""

    port: int
    database: str


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
    web0 = machine.processes_cpu(f"127.0.0.1:{server.port}")
    db0 = machine.processes_cpu(server.database)
    busy0 = machine.machine_cpu()[0]
    cpu0, moves0, started = machine.own_cpu(), sum(accepted), time.perf_counter()
    time.sleep(seconds)
    moves = sum(accepted) - moves0
    elapsed = time.perf_counter() - started
    cpu = machine.own_cpu() - cpu0
    web = machine.cpu_since(web0, f"127.0.0.1:{server.port}")
    db = machine.cpu_since(db0, server.database)
    busy = machine.machine_cpu()[0] - busy0
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
        "other_cores": max(0.0, busy - web - db - cpu) / elapsed,
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
    web0 = machine.processes_cpu(f"127.0.0.1:{server.port}")
    db0 = machine.processes_cpu(server.database)
    busy0, cpu0, started = machine.machine_cpu()[0], machine.own_cpu(), time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    ours = (
        machine.cpu_since(web0, f"127.0.0.1:{server.port}")
        + machine.cpu_since(db0, server.database)
        + machine.own_cpu() - cpu0
    )  # fmt: skip
    other_cores = max(0.0, machine.machine_cpu()[0] - busy0 - ours) / elapsed
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
