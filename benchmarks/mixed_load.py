"""The arena under mixed load, as users run it (issue 39): does every match finish?

    python -m benchmarks.mixed_load [--shape embedded|production] [--minutes 10]
        [--at-least 0]
        [--builtin-matches 102] [--http-matches 12] [--port 23100] [--redis-db 3]
        [--builtin-tournaments 2] [--persons 1] [--no-ladder] [--no-client] [--json F]

One shape at a time: ``embedded`` runs ``scripts/run-dev`` (SQLite, the embedded broker)
in a fresh folder; ``production`` runs docker/compose.yaml's processes directly (gunicorn,
the worker, the interactive worker, two bot-calls workers, beat) on a scratch PostgreSQL
database and Redis database ``--redis-db`` (flushed before and after). On it, at once:
the ladder on; two tournaments of the built-in bots (``--builtin-matches`` each, two
owners); a tournament of two HTTP bots (one answers at once, one thinks 1-3 s on a 5 s
limit) and a built-in one; a client bot (``cardkit client``, on its account stream) in
one match after another against a built-in; and a person who plays built-ins through the
REST API, match after match. It stops when the tournaments end or after ``--minutes``
(but not before ``--at-least`` minutes: the ladder, the client bot and the person play on
after the tournaments ended), then waits up to two minutes for the matches in play, and
prints one JSON report: per kind of work (tournament, ladder, interactive, sequential)
the matches, finished, aborted, forfeited (every bot here plays legally and in time, so
every forfeit is the arena's), and unfinished; the wait from a match's "ready" (its task
sent for a tournament match, its creation otherwise) to its first move, and the wait of
each arena turn (from the turn's start to the built-in's move or the HTTP bot's request
sent), p50/p95/max in seconds.
``--json`` writes it to a file too. ``tests/ops/test_mixed_load.py`` runs a short load.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from benchmarks import harness
from benchmarks.harness import scratch_database
from benchmarks.soak import Soak

BUILTINS = ("random", "greedy", "strong")
HTTP_MOVE_TIME_LIMIT = 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mixed_load", description=__doc__)
    parser.add_argument("--shape", choices=("embedded", "production"), default="embedded")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument(
        "--at-least", type=float, default=0.0,
        help="minutes the load runs even when the tournaments ended sooner",
    )  # fmt: skip
    parser.add_argument("--builtin-matches", type=int, default=102)
    parser.add_argument("--http-matches", type=int, default=12)
    parser.add_argument("--port", type=int, default=23100, help="web port; bots the next two")
    parser.add_argument("--redis-db", type=int, default=3, help="production shape's Redis db")
    parser.add_argument("--builtin-tournaments", type=int, default=2)
    parser.add_argument("--persons", type=int, default=1, help="people playing at once")
    parser.add_argument("--no-ladder", action="store_true")
    parser.add_argument("--no-client", action="store_true", help="no client bot")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    report = mixed_load(
        shape=args.shape, minutes=args.minutes, builtin_matches=args.builtin_matches,
        http_matches=args.http_matches, port=args.port, redis_db=args.redis_db,
        builtin_tournaments=args.builtin_tournaments, persons=args.persons,
        ladder=not args.no_ladder, client=not args.no_client, at_least=args.at_least,
    )  # fmt: skip
    print(json.dumps(report, indent=2), flush=True)
    harness.write_json(args.json, report)
    return 0


def mixed_load(
    *, shape: str, minutes: float, builtin_matches: int, http_matches: int, port: int,
    redis_db: int = 3, var_dir: Path | None = None, builtin_tournaments: int = 2,
    ladder: bool = True, client: bool = True, persons: int = 1, redis_url: str | None = None,
    at_least: float = 0.0,
) -> dict:  # fmt: skip
    """Run the load on a fresh arena of ``shape`` and return the report (see the module).

    The parts can be left out: ``http_matches`` 0 (no HTTP bots' tournament), no
    ``ladder``, no ``client`` bot; ``persons`` people play at once. ``redis_url``: a Redis
    of the caller's own for the production shape (not flushed), in place of the
    database ``redis_db`` on this machine's."""
    var_dir = var_dir or Path(tempfile.mkdtemp(prefix=f"cardserver-mixed-{shape}-"))
    var_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        arena = _arena(shape, var_dir, port, redis_db, stack, ladder=ladder, redis_url=redis_url)
        load = Load(arena, port)
        stack.callback(load.stop)
        load.start(
            builtin_matches=builtin_matches, http_matches=http_matches,
            builtin_tournaments=builtin_tournaments, client=client, persons=persons,
        )  # fmt: skip
        load.run(minutes * 60, at_least=at_least * 60)
        report = load.report()
        report |= {"shape": shape, "minutes": minutes, "builtin_matches": builtin_matches,
                   "http_matches": http_matches,
                   "load_seconds": round(load.load_seconds, 1)}  # fmt: skip
        return report


def _arena(
    shape: str, var_dir: Path, port: int, redis_db: int, stack, *, ladder: bool,
    redis_url: str | None,
) -> Soak:  # fmt: skip
    if shape == "embedded":
        arena = Soak(var_dir, port, bots=0, log=var_dir / "load.log")
        arena.environment["RUN_LADDER"] = "1" if ladder else "0"
        arena.start_run_dev()  # migrates, ensures the built-ins, turns the ladder on
        return arena
    from benchmarks.soak_production import ProductionSoak

    arena = ProductionSoak(
        var_dir, port, bots=0, log=var_dir / "load.log", spectators=0, redis_db=redis_db,
        clients=0,
    )  # fmt: skip
    database = stack.enter_context(scratch_database())
    arena.use_database(database.url)
    if redis_url:
        arena.broker_url = arena.environment["CELERY_BROKER_URL"] = redis_url
    else:
        _flush(arena.broker_url)
        stack.callback(_flush, arena.broker_url)
    # One Redis database: the broker's and the cache's keys are kept apart by prefix.
    arena.environment["CACHE_URL"] = arena.broker_url
    arena.manage("migrate", "--noinput")
    arena.manage("ensure_builtin_bots")
    if ladder:
        arena.manage("ladder", "on", "--tick")
    arena.start_run_dev()  # compose's processes
    return arena


def _flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


class Load:
    """The users of the arena: organisers, bot authors, a client bot and a person."""

    def __init__(self, arena: Soak, port: int) -> None:
        self.arena = arena
        self.http = httpx.Client(base_url=arena.api, timeout=60)
        self.port = port
        self.processes: list[subprocess.Popen] = []
        self.tournaments: list[int] = []
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.errors: list[str] = []
        self.started = time.time()
        self.load_seconds = 0.0

    def user(self, name: str) -> dict:
        answer = self.http.post(
            "/accounts/signup/", json={"username": name, "password": f"{name}-passphrase-x7"}
        )
        answer.raise_for_status()
        return {"Authorization": f"Token {answer.json()['token']}"}

    def start(
        self, *, builtin_matches: int, http_matches: int, builtin_tournaments: int = 2,
        client: bool = True, persons: int = 1,
    ) -> None:  # fmt: skip
        if http_matches:
            self._http_bots(http_matches)
        if client:
            self._client_bot()
        per_pairing = max(2, 2 * round(builtin_matches / 6))  # three pairings, even
        for number in range(builtin_tournaments):
            self._tournament(self.user(f"organiser{number}"), list(BUILTINS), per_pairing)
        for number in range(persons):
            name = f"person{number}"
            self._loop(functools.partial(self._person, name=name), self.user(name))

    def _http_bots(self, matches: int) -> None:
        author = self.user("author")
        for offset, (name, think) in enumerate((("instant", "0"), ("thinker", "1-3")), 1):
            answer = self.http.post("/bots/", headers=author, json={
                "name": name, "kind": "http", "url": f"http://127.0.0.1:{self.port + offset}/",
                "games": ["durak"]})  # fmt: skip
            answer.raise_for_status()
            # "--secret=" with the value: a secret may start with "-" (one in 64 made
            # before they had a prefix), which argparse would take for an option.
            self._spawn(
                "-m", "benchmarks.mixed_load_bot", "--port", str(self.port + offset),
                f"--secret={answer.json()['secret']}", "--think", think, log=f"bot-{name}",
            )  # fmt: skip
        for offset, (name, process) in enumerate(zip(("instant", "thinker"), self.processes[-2:],
                                                     strict=True), 1):  # fmt: skip
            harness.wait_until(
                lambda p=process, port=self.port + offset: harness.accepts(port)
                or p.poll() is not None,
                timeout=60, what=f"the HTTP bot {name}'s server",
            )  # fmt: skip
            if process.poll() is not None:
                log = self.arena.var_dir / f"bot-{name}.log"
                raise RuntimeError(f"the HTTP bot {name}'s server exited; see {log}")
        for name in ("instant", "thinker"):
            self.http.post(f"/bots/{name}/ping/", headers=author).raise_for_status()
        per_pairing = max(2, 2 * round(matches / 6))
        self._tournament(author, ["instant", "thinker", "greedy"], per_pairing)

    def _client_bot(self) -> None:
        client_owner = self.user("clientowner")
        answer = self.http.post("/bots/", headers=client_owner, json={
            "name": "client", "kind": "client", "games": ["durak"]})  # fmt: skip
        answer.raise_for_status()
        self._spawn(
            "-m", "cardkit", "client", "greedy", "--server", f"http://127.0.0.1:{self.port}",
            "--token", answer.json()["token"], log="client",
        )  # fmt: skip
        self._loop(self._challenges, client_owner)

    def _spawn(self, *arguments: str, log: str) -> None:
        command = [sys.executable, *arguments]
        self.processes.append(self.arena.start_process(command, self.arena.var_dir / f"{log}.log"))

    def _tournament(self, owner: dict, bots: list[str], per_pairing: int) -> None:
        answer = self.http.post("/tournaments/", headers=owner, json={
            "name": f"load {len(self.tournaments)}", "game": "durak", "players": 2,
            "games_per_pairing": per_pairing, "move_time_limit": HTTP_MOVE_TIME_LIMIT,
            "bots": bots, "start": True})  # fmt: skip
        answer.raise_for_status()
        self.tournaments.append(answer.json()["id"])

    def _loop(self, play, headers: dict) -> None:
        def forever() -> None:
            with httpx.Client(base_url=self.arena.api, timeout=60, headers=headers) as http:
                while not self.stopping.is_set():
                    try:
                        play(http)
                    except (httpx.HTTPError, KeyError, ValueError) as exc:
                        self.errors.append(f"{type(exc).__name__}: {exc}")
                        time.sleep(2)

        thread = threading.Thread(target=forever, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _challenges(self, http: httpx.Client) -> None:
        """The client bot's owner keeps it in one match against a built-in at a time."""
        match = self._create(http, [{"bot": "client"}, {"bot": random.choice(BUILTINS)}])
        self._until_over(http, match)

    def _person(self, http: httpx.Client, *, name: str) -> None:
        """A person plays a built-in through the API: read the view, make the first legal
        move, wait for the bot's reply (as the browser's page does); a match begun is
        played to its end."""
        match = self._create(http, [{"user": name}, {"bot": random.choice(BUILTINS)}])
        while True:
            view = http.get(f"/matches/{match}/wait/", params={"timeout": 10}).json()
            if view["status"] not in ("waiting", "active"):
                return
            if view.get("legal_moves"):
                http.post(f"/matches/{match}/moves/",
                          json={"ply": view["ply"], "move": view["legal_moves"][0]})  # fmt: skip

    def _create(self, http: httpx.Client, seats: list[dict]) -> int:
        # A person told to wait (429) waits as told and asks again.
        while True:
            answer = http.post("/matches/", json={
                "game": "durak", "players": 2, "seats": seats, "move_time_limit": 30.0,
            })
            if answer.status_code != 429:
                break
            time.sleep(float(answer.headers.get("Retry-After", 5)))
        answer.raise_for_status()
        return answer.json()["id"]

    def _until_over(self, http: httpx.Client, match: int) -> None:
        # The client bot plays its match to its end, after the load stops too.
        while True:
            if http.get(f"/matches/{match}/").json()["status"] not in ("waiting", "active"):
                return
            time.sleep(1)

    def run(self, seconds: float, *, at_least: float = 0.0) -> None:
        """Until the tournaments end or ``seconds`` pass, and at least ``at_least`` seconds;
        then stop making matches and give those in play two minutes to end."""
        begun = time.monotonic()
        deadline, earliest = begun + seconds, begun + at_least
        shown = begun
        while time.monotonic() < earliest or (
            time.monotonic() < deadline and not self._tournaments_over()
        ):
            self.arena.check_processes()
            time.sleep(5)
            if time.monotonic() - shown >= 60:
                shown = time.monotonic()
                self._progress(shown - begun)
        self.load_seconds = time.monotonic() - begun
        self.stopping.set()
        # The ladder deals on and on: off, so that the matches in play can all end. A
        # shared database server may refuse a connection for a while: tried again.
        _retrying(lambda: self.arena.manage("ladder", "off"))
        for thread in self.threads:
            thread.join(timeout=120)
        self._settle(time.monotonic() + 120)

    def _progress(self, elapsed: float) -> None:
        """A line on stderr a minute: each tournament's matches done, so a run that
        fails late still says how far it got."""
        done = []
        for pk in self.tournaments:
            with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                row = self.http.get(f"/tournaments/{pk}/").json()
                progress = row.get("progress") or {}
                done.append(f"{pk}: {row['status']} {progress.get('done')}/{progress.get('total')}")
        print(f"{elapsed:.0f} s: {'; '.join(done)}", file=sys.stderr, flush=True)

    def _tournaments_over(self) -> bool:
        statuses = [
            self.http.get(f"/tournaments/{pk}/").json()["status"] for pk in self.tournaments
        ]
        return all(status in ("finished", "cancelled") for status in statuses)

    def _settle(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if not self.report()["unfinished"] and self._tournaments_over():
                return
            time.sleep(5)

    def report(self) -> dict:
        """The figures, read from the arena's database by a process on its settings."""
        return _retrying(self._report)

    def _report(self) -> dict:
        code = "import json; from benchmarks.mixed_load_report import load_report; " \
            f"print(json.dumps(load_report(since={self.started})))"
        report = self.arena.django_json(code)
        report["load_errors"] = self.errors[:20]
        return report

    def stop(self) -> None:
        self.stopping.set()
        harness.stop_process_groups(self.processes)
        self.arena.stop()
        self.http.close()


def _retrying(action, tries: int = 6, wait: float = 10.0):
    """Return ``action()``, tried again after ``wait`` seconds while it fails (a shared
    PostgreSQL server out of connections refuses a process for a while)."""
    for attempt in range(tries):
        try:
            return action()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            if attempt == tries - 1:
                raise
            print(f"retrying after: {exc} {getattr(exc, 'stderr', '')!s:.300}",
                  file=sys.stderr, flush=True)  # fmt: skip
            time.sleep(wait)
    return None


if __name__ == "__main__":
    raise SystemExit(main())
