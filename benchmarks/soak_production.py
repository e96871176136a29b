"""Soak the production shape: docker/'s processes, run directly, for hours.

    python -m benchmarks.soak_production --hours 2 [--port 8300] [--bots 3]
                                         [--spectators 20] [--redis-db 11]

What compose runs (``benchmarks.compose``: the image's gunicorn with uvicorn workers, the
CPU worker, two ``bot-calls`` workers, beat, after the migrate service), with compose's
environment, on a scratch PostgreSQL database (dropped at the end) and Redis database
``--redis-db`` (broker and pub/sub; the next one down for the cache), both flushed before
and after, so use one that nothing else does. The ladder ticks every second and seats the
HTTP bots of ``--bots`` users beside the built-in players, as ``benchmarks.soak`` does.

On top of the embedded soak's figures it follows live play as clients would:
``--spectators`` Server-Sent-Events streams, each following one active ladder match from
its state to its end, then another; ``--clients`` client bots run by the kit's client
(``cardkit client``: the account stream, moves by the API), each kept in a match against
a built-in player by its owner (a match without a move for a minute is a fault); and each
HTTP bot owner's account stream, held open for
the whole soak (``account_opens`` counts its openings: more than one each means the
server ended it; an HTTP bot's owner holds no seat, so its events are few). A spectator
counts as a stream fault any ``move`` whose ply is not the one after the last, and a
stream that ended without ``end`` or ``reconnect``. A fault counts like a logged error:
the soak then exits with 1. Its report adds ``streams`` and the Redis queues' lengths
(``broker_queues``) in place of the embedded broker's files.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from benchmarks import harness
from benchmarks.compose import COMPOSE, compose_shell, image_command, service_environment
from benchmarks.harness import BASE_DIR, POSTGRES, REDIS, scratch_database
from benchmarks.soak import Soak, soak_arguments, soak_prepare
from cardkit.engine.info import EndReason

# The Celery queues of compose's workers, whose lengths show a backlog.
QUEUES = ("celery", "bot-calls")
BOT_CALLS_PROCESSES = 2
# A client bot's time a move in its matches, and how long such a match may go without a
# move: a turn the client was not told of ends in a forfeit on time, itself a fault.
CLIENT_MOVE_LIMIT = 30.0
CLIENT_STALL = 45.0
# How deals end by the rules; any other end of a client's match (a forfeit) is a fault.
ENGINE_END_REASONS = frozenset(EndReason)


class ProductionSoak(Soak):
    def __init__(
        self, var_dir: Path, port: int, bots: int, log: Path, *, spectators: int, redis_db: int,
        clients: int, json_path: Path | None = None, cache_db: int | None = None,
    ) -> None:  # fmt: skip
        super().__init__(var_dir, port, bots, log, json_path=json_path)
        self.client_count = clients
        self.clients: dict[str, dict] = {}
        self.redis_db = redis_db
        self.cache_db = redis_db - 1 if cache_db is None else cache_db
        self.broker_url = f"{REDIS}/{redis_db}"
        self.spectator_count = spectators
        self.arena: dict[str, subprocess.Popen] = {}
        self.streams = {
            "followed": 0, "ended": 0, "moves": 0, "reconnects": 0, "refused": 0,
            "account_opens": 0, "account_events": 0, "client_matches": 0,
            "faults": 0, "first_faults": [],
        }  # fmt: skip
        self._stop = threading.Event()

    # --- Processes ----------------------------------------------------------------------

    def use_database(self, database_url: str) -> None:
        environment = service_environment(
            {"SECRET_KEY": secrets.token_urlsafe(50), "POSTGRES_PASSWORD": "unused"}
        )
        # Compose's service names are host names in its network; here, this machine's.
        environment.update(
            DATABASE_URL=database_url,
            CELERY_BROKER_URL=self.broker_url,
            CACHE_URL=f"{REDIS}/{self.cache_db}",
            ALLOWED_HOSTS="127.0.0.1,localhost",
            # The soak's bots listen on 127.0.0.1, which the arena refuses by default.
            BOTS_ALLOW_PRIVATE_URLS="1",
        )
        self.environment.update(environment)

    def redis_flush(self) -> None:
        import redis

        for db in {self.redis_db, self.cache_db}:
            redis.Redis.from_url(f"{REDIS}/{db}").flushdb()

    def start_run_dev(self) -> None:
        """Start compose's app services (here in place of run-dev), each a process group."""
        for name in self.arena_commands():
            self.start_service(name)
        self.wait_for_health(see=self.var_dir)

    def arena_commands(self) -> dict[str, list[str]]:
        web = [arg.replace("0.0.0.0:8000", f"127.0.0.1:{self.port}") for arg in image_command()]
        commands = {"web": web, "worker": COMPOSE["services"]["worker"]["command"]}
        commands["interactive"] = compose_shell(COMPOSE["services"]["interactive"]["command"])
        calls = compose_shell(COMPOSE["services"]["bot-calls"]["command"])
        for number in range(BOT_CALLS_PROCESSES):
            # Compose's replicas are containers, each with a host name of its own.
            commands[f"bot-calls-{number}"] = [
                *calls[:2],
                calls[2].replace("bot-calls@%h", f"bot-calls-{number}@%h"),
            ]
        commands["beat"] = COMPOSE["services"]["beat"]["command"]
        return commands

    def start_service(self, name: str) -> None:
        command = self.arena_commands()[name]
        self.arena[name] = self.start_process(command, self.var_dir / f"{name}.log")

    def register_bots(self) -> None:
        """The HTTP bots, then ``--clients`` client bots of users of their own, each run by
        the kit's client (``cardkit client``: one account stream, moves by the API)."""
        super().register_bots()
        with httpx.Client(base_url=self.api, timeout=30) as http:
            for index in range(self.client_count):
                name = f"soak-client-{index}"
                answer = http.post(
                    "/accounts/signup/",
                    json={
                        "username": f"soakclient{index}",
                        "password": f"passphrase-for-client-{index}-x7",
                    },
                )
                answer.raise_for_status()
                headers = {"Authorization": f"Token {answer.json()['token']}"}
                answer = http.post(
                    "/bots/", headers=headers,
                    json={"name": name, "kind": "client", "games": ["durak", "volynshchik"]},
                )  # fmt: skip
                answer.raise_for_status()
                self.clients[name] = {"owner": headers, "token": answer.json()["token"]}
                self.start_client(name)

    def start_client(self, name: str) -> None:
        client = self.clients[name]
        client["process"] = self.start_process(
            [sys.executable, "-m", "cardkit", "client", "greedy",
             "--server", f"http://127.0.0.1:{self.port}", "--token", client["token"]],
            self.var_dir / f"{name}.log",
        )  # fmt: skip

    def stop(self) -> None:
        self._stop.set()
        bots = [bot.get("process") for bot in [*self.bots.values(), *self.clients.values()]]
        # The web server's SIGTERM ends its streams with their reconnect event.
        harness.stop_process_groups([*bots, *self.arena.values()], timeout=40)

    def check_processes(self) -> None:
        for name, process in list(self.arena.items()):
            if process.poll() is not None:
                self.crash(name, process.returncode, harness.log_tail(self.var_dir / f"{name}.log"))
                # What it left running in its group goes with it, at once.
                harness.stop_process_group(process, timeout=0)
                self.restarts += 1
                self.start_service(name)
        for name, bot in self.bots.items():
            if bot["process"].poll() is not None:
                self.crash(name, bot["process"].returncode, "")
                self.restarts += 1
                self.start_bot(name)
        for name, client in self.clients.items():
            if client["process"].poll() is not None:
                log = self.var_dir / f"{name}.log"
                self.crash(name, client["process"].returncode, harness.log_tail(log))
                self.restarts += 1
                self.start_client(name)

    # --- Figures ------------------------------------------------------------------------

    def sessions(self) -> dict[int, str]:
        sessions = {process.pid: name for name, process in self.arena.items()}
        sessions.update({bot["process"].pid: "bots" for bot in self.bots.values()})
        sessions.update({client["process"].pid: "bots" for client in self.clients.values()})
        return sessions

    def kind(self, command: str, session: str, ppid: int) -> str | None:
        if session == "web":
            # gunicorn's master forks the workers, which serve: they are the ones to watch.
            return "web worker" if ppid == self.arena["web"].pid else "web master"
        if session in ("bots", "beat") or session.startswith("bot-calls"):
            return "bot-calls" if session.startswith("bot-calls") else session
        return "worker main" if ppid not in self.sessions() or ppid == 1 else "worker pool"

    def log_lines(self) -> list[str]:
        lines = []
        for name in self.arena:
            lines += harness.log_lines(self.var_dir / f"{name}.log")
        return lines

    def backlog(self) -> dict:
        import redis

        client = redis.Redis.from_url(self.broker_url)
        return {"broker_queues": {queue: client.llen(queue) for queue in QUEUES}}

    def extra_report(self) -> dict:
        streams = dict(self.streams)
        streams["first_faults"] = streams["first_faults"][:5]
        return {"streams": streams}

    def faults(self) -> int:
        return self.streams["faults"]

    # --- Live clients -------------------------------------------------------------------

    def clients_start(self) -> None:
        threading.Thread(target=asyncio.run, args=(self._clients(),), daemon=True).start()

    async def _clients(self) -> None:
        async with httpx.AsyncClient(base_url=self.api, timeout=httpx.Timeout(60, read=90)) as http:
            tasks = [asyncio.create_task(self._spectate(http)) for _ in range(self.spectator_count)]
            tasks += [
                asyncio.create_task(self._account(http, bot["headers"]))
                for bot in self.bots.values()
            ]
            tasks += [
                asyncio.create_task(self._challenge(http, name, client["owner"]))
                for name, client in self.clients.items()
            ]
            while not self._stop.is_set():
                await asyncio.sleep(1)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _fault(self, text: str) -> None:
        self.streams["faults"] += 1
        self.streams["first_faults"].append(f"{_time()} {text}")

    async def _spectate(self, http: httpx.AsyncClient) -> None:
        while not self._stop.is_set():
            try:
                active = (await http.get("/matches/?status=active")).json()["results"]
            except (httpx.HTTPError, ValueError, KeyError):
                await asyncio.sleep(2)
                continue
            if not active:
                await asyncio.sleep(1)
                continue
            await self._follow(http, random.choice(active)["id"])

    async def _follow(self, http: httpx.AsyncClient, match_id: int) -> None:
        """Follow one match to its end, resuming by ply after a cut."""
        self.streams["followed"] += 1
        last: int | None = None
        while not self._stop.is_set():
            headers = {} if last is None else {"Last-Event-ID": str(last)}
            try:
                ended, last = await self._read(http, match_id, headers, last)
            except (httpx.HTTPError, ValueError) as exc:
                ended = False
                if self._stop.is_set():
                    return
                self._fault(f"match {match_id}: the stream failed ({type(exc).__name__}: {exc})")
            if ended:
                self.streams["ended"] += 1
                return
            self.streams["reconnects"] += 1
            await asyncio.sleep(1)

    async def _read(self, http, match_id: int, headers: dict, last: int | None):
        """Read one stream of the match; return whether it ended, and the last ply seen."""
        async with http.stream("GET", f"/matches/{match_id}/stream/", headers=headers) as stream:
            if stream.status_code == 429:
                # The arena's rate limit or stream cap, said as it should be: wait.
                self.streams["refused"] += 1
                await asyncio.sleep(float(stream.headers.get("Retry-After", 5)))
                return False, last
            if stream.status_code != 200:
                raise ValueError(f"status {stream.status_code}")
            event = ply = None
            async for line in stream.aiter_lines():
                if line.startswith("id: "):
                    ply = int(line[4:])
                elif line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    if event == "move":
                        if last is not None and ply != last + 1:
                            self._fault(f"match {match_id}: move {ply} after {last}")
                        self.streams["moves"] += 1
                        last = ply
                    elif event == "state":
                        # The view at its ply: a sealed match (games.reading) shows
                        # spectators views without its moves until its deal group ends,
                        # and the moves after the view once it is public.
                        last = ply
                    elif event == "end":
                        return True, last
                    elif event == "reconnect":
                        return False, last
            self._fault(f"match {match_id}: the stream ended without end or reconnect")
            return False, last

    async def _challenge(self, http: httpx.AsyncClient, name: str, owner: dict) -> None:
        """Keep the client bot in one match against a built-in player at a time; a match
        that makes no move for CLIENT_STALL seconds is a fault (the client was not told its
        turn, or its move was lost)."""
        while not self._stop.is_set():
            seats = [{"bot": name}, {"bot": random.choice(("greedy", "random"))}]
            game = random.choice(("durak", "volynshchik"))
            try:
                answer = await http.post(
                    "/matches/",
                    headers=owner,
                    json={
                        "game": game,
                        "players": 2,
                        "seats": seats,
                        "move_time_limit": CLIENT_MOVE_LIMIT,
                    },
                )
                if answer.status_code == 429:
                    await asyncio.sleep(float(answer.headers.get("Retry-After", 5)))
                    continue
                answer.raise_for_status()
                match_id = answer.json()["id"]
                await self._played(http, match_id, owner)
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                if not self._stop.is_set():
                    self._fault(f"{name}: a match could not be made ({type(exc).__name__}: {exc})")
                await asyncio.sleep(5)

    async def _played(self, http: httpx.AsyncClient, match_id: int, owner: dict) -> None:
        ply, moved = -1, time.monotonic()
        while not self._stop.is_set():
            await asyncio.sleep(2)
            match = (await http.get(f"/matches/{match_id}/", headers=owner)).json()
            if match["status"] in ("finished", "aborted"):
                self.streams["client_matches"] += 1
                if match.get("end_reason") not in ENGINE_END_REASONS:
                    self._fault(f"client match {match_id} ended by {match.get('end_reason')}")
                return
            if match["ply"] != ply:
                ply, moved = match["ply"], time.monotonic()
            elif time.monotonic() - moved > CLIENT_STALL:
                self._fault(f"client match {match_id}: no move for {CLIENT_STALL:g} s at {ply}")
                return

    async def _account(self, http: httpx.AsyncClient, headers: dict) -> None:
        accept = {**headers, "Accept": "application/x-ndjson"}
        while not self._stop.is_set():
            try:
                async with http.stream("GET", "/stream/events/", headers=accept) as stream:
                    self.streams["account_opens"] += 1
                    async for line in stream.aiter_lines():
                        if line.strip():
                            json.loads(line)
                            self.streams["account_events"] += 1
            except (httpx.HTTPError, ValueError) as exc:
                if not self._stop.is_set():
                    self._fault(f"account stream failed ({type(exc).__name__}: {exc})")
            await asyncio.sleep(1)

    # --- The run ------------------------------------------------------------------------

    def run(self, seconds: float, report_every: float) -> int:
        self.redis_flush()
        try:
            with scratch_database(POSTGRES) as database:
                self.use_database(database.url)
                # The migrate service, then the ladder at full speed.
                subprocess.run(
                    COMPOSE["services"]["migrate"]["command"], cwd=BASE_DIR,
                    env=self.environment, check=True, timeout=600, capture_output=True,
                )  # fmt: skip
                self.manage("ladder", "on", "--every", "1")
                return self.soak(seconds, report_every, before_loop=self.clients_start)
        finally:
            self.redis_flush()


def _time() -> str:
    return time.strftime("%H:%M:%S", time.gmtime())


# Its own command, not a --shape of benchmarks.soak: the embedded soak is this one's base
# and knows nothing of it, so that the two modules do not import each other.
def main(argv: list[str] | None = None) -> int:
    parser = soak_arguments("python -m benchmarks.soak_production", __doc__)
    parser.add_argument("--spectators", type=int, default=20, help="SSE clients")
    parser.add_argument("--redis-db", type=int, default=11, help="flushed, and the cache's")
    parser.add_argument(
        "--cache-db",
        type=int,
        help="the cache's Redis database (flushed too); default: the one below --redis-db",
    )
    parser.add_argument("--clients", type=int, default=2, help="client bots")
    args = parser.parse_args(argv)
    var_dir, log = soak_prepare(args)
    soak = ProductionSoak(
        var_dir, args.port, args.bots, log, spectators=args.spectators,
        redis_db=args.redis_db, clients=args.clients, json_path=args.json, cache_db=args.cache_db,
    )  # fmt: skip
    return soak.run(args.hours * 3600, args.report_every)


if __name__ == "__main__":
    sys.exit(main())
