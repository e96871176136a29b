"""Faults: a database that is down answers 503, and the arena recovers from restarts.

The two real-service tests run their own PostgreSQL and Redis servers (tests/ops/
services.py) on free ports and restart those, never the machine's shared servers.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from django.db import OperationalError
from django.test import RequestFactory

from benchmarks.harness import free_port, stop_process_group, wait_until
from cardserver import views
from tests.ops.services import PrivatePostgres, PrivateRedis
from tests.processes import BASE_DIR, clean_environment, worker_database_url

# --- 503 when the database does not answer ----------------------------------------------


def take_database_down(monkeypatch) -> None:
    """Make every new database cursor fail as when the server is down."""
    from django.db.backends.base.base import BaseDatabaseWrapper

    def refused(self, *args, **kwargs):
        raise OperationalError("connection refused: is the server running?")

    monkeypatch.setattr(BaseDatabaseWrapper, "cursor", refused)


@pytest.fixture
def database_down(monkeypatch):
    take_database_down(monkeypatch)


def assert_database_unavailable(response) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert response.json() == {
        "error": {
            "code": "database_unavailable",
            "message": "The database is not answering; try again in a moment.",
            "detail": {"retry_after": 2},
        }
    }


@pytest.mark.django_db
def test_api_request_while_the_database_is_down_answers_503_json(user, monkeypatch):
    from tests.matches import token_client

    client = token_client(user)
    take_database_down(monkeypatch)

    assert_database_unavailable(client.get("/api/v1/matches/1/me/"))
    assert_database_unavailable(client.post("/api/v1/matches/", {"game": "durak"}))


@pytest.mark.django_db
def test_anonymous_api_read_while_the_database_is_down_answers_503_json(
    api_client, database_down
):
    assert_database_unavailable(api_client.get("/api/v1/matches/"))


@pytest.mark.django_db
def test_page_while_the_database_is_down_answers_a_plain_503(client, database_down):
    response = client.get("/matches/")

    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/plain")
    assert response["Retry-After"] == "2"


def test_database_failure_in_a_middleware_answers_503_not_500():
    request = RequestFactory().get("/api/v1/games/")
    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        response = views.server_error(request)

    assert response.status_code == 503
    assert b"database_unavailable" in response.content


# --- PostgreSQL restarted while matches are played --------------------------------------


@dataclass
class Player:
    """One user playing 2-player Durak matches through the API, holding both seats."""

    http: httpx.Client
    username: str
    rng: random.Random
    # (match id, ply) -> the move the server accepted for that ply.
    accepted: dict[tuple[int, int], dict] = field(default_factory=dict)
    matches: list[int] = field(default_factory=list)
    # Answers other than 200/201: (status, code, seconds taken, time).
    failures: list[tuple[int, str, float, float]] = field(default_factory=list)
    slowest: float = 0.0

    def call(self, method: str, url: str, stop: threading.Event, **kwargs) -> dict | None:
        """Send until the server answers other than 503; return the JSON, or None if stopped.

        A 503 must be the database's clean answer; anything else fails the test later.
        """
        while not stop.is_set():
            started = time.monotonic()
            try:
                response = self.http.request(method, url, **kwargs)
            except httpx.HTTPError as exc:
                self.failures.append((0, type(exc).__name__, time.monotonic() - started, started))
                time.sleep(0.2)
                continue
            took = time.monotonic() - started
            self.slowest = max(self.slowest, took)
            if response.status_code in (200, 201):
                return response.json()
            code = "html"
            if response.headers.get("content-type", "").startswith("application/json"):
                code = response.json()["error"]["code"]
            self.failures.append((response.status_code, code, took, started))
            if response.status_code != 503:
                raise AssertionError(f"{method} {url}: {response.status_code} {response.text}")
            time.sleep(0.2)
        return None

    def play(self, stop: threading.Event) -> None:
        match_id = None
        while not stop.is_set():
            if match_id is None:
                created = self.call(
                    "POST", "/api/v1/matches/", stop,
                    json={"game": "durak", "players": 2, "seats": [{"user": self.username}] * 2},
                )  # fmt: skip
                if created is None:
                    return
                match_id = created["id"]
                self.matches.append(match_id)
            view = self.call("GET", f"/api/v1/matches/{match_id}/me/", stop)
            if view is None:
                return
            if view["status"] != "active":
                match_id = None
                continue
            move = self.rng.choice(view["legal_moves"])
            # The same key for every try of this move: a move that the database committed
            # before its answer was lost is not played twice.
            answer = self.call(
                "POST", f"/api/v1/matches/{match_id}/moves/", stop,
                json={"ply": view["ply"], "seat": view["seat"], "move": move},
                headers={"Idempotency-Key": f"{match_id}:{view['ply']}"},
            )  # fmt: skip
            if answer is None:
                return
            self.accepted[(match_id, answer["ply"])] = answer["move"]
            if answer["ended_match"]:
                match_id = None


def start_server(environment: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:cardserver.gunicorn",
         "cardserver.asgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--threads", "4", "--graceful-timeout", "5"],
        cwd=BASE_DIR, env=environment, stdout=log.open("ab"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


@pytest.mark.real_services
def test_postgres_restart_mid_play_fails_requests_cleanly_then_recovers_every_move(tmp_path):
    pg = PrivatePostgres().init()
    pg.start()
    server = None
    try:
        port = free_port()
        environment = clean_environment(
            tmp_path / "var",
            DJANGO_SETTINGS_MODULE="cardserver.settings",
            DATABASE_URL=pg.createdb("arena"),
            DEBUG="0",
            SECRET_KEY=secrets.token_urlsafe(50),
            ALLOWED_HOSTS="127.0.0.1",
            SECURE_SSL_REDIRECT="0",
            LOG_LEVEL="WARNING",
            THROTTLE_LOGIN="off",
        )
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=BASE_DIR, env=environment, check=True, timeout=300,
        )  # fmt: skip
        server_log = tmp_path / "gunicorn.log"
        server = start_server(environment, port, server_log)
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(f"{base}/api/v1/health/"), timeout=60, what="gunicorn")

        players = []
        for number in range(4):
            username = f"player{number}"
            signup = httpx.post(
                f"{base}/api/v1/accounts/signup/",
                json={"username": username, "password": secrets.token_urlsafe(16)},
            )
            assert signup.status_code == 201, signup.text
            players.append(
                Player(
                    http=httpx.Client(
                        base_url=base,
                        headers={"Authorization": f"Token {signup.json()['token']}"},
                        timeout=30,
                    ),
                    username=username,
                    rng=random.Random(number),
                )
            )
        stop = threading.Event()
        threads = [threading.Thread(target=p.play, args=(stop,)) for p in players]
        for thread in threads:
            thread.start()

        time.sleep(3)
        moves_before = sum(len(p.accepted) for p in players)
        down_at = time.monotonic()
        pg.stop(mode="immediate")  # a crash: connections are cut mid-transaction
        time.sleep(3)
        pg.start()
        up_at = time.monotonic()
        time.sleep(6)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)

        # Every answer that was not a success was the database's clean 503, quickly.
        failures = [f for p in players for f in p.failures]
        assert failures, "no request met the outage"
        assert {(status, code) for status, code, _, _ in failures} == {
            (503, "database_unavailable")
        }, failures
        assert max(p.slowest for p in players) < 10
        assert all(down_at - 1 <= at <= up_at + 10 for _, _, _, at in failures)
        # Play went on after the restart.
        assert moves_before > 0
        assert sum(len(p.accepted) for p in players) > moves_before

        # Each match's log is exactly the moves its player was told were accepted: no
        # ply missing, none twice.
        with httpx.Client(base_url=base, timeout=30) as reader:
            for player in players:
                for match_id in player.matches:
                    replay = reader.get(f"/api/v1/matches/{match_id}/replay/")
                    if replay.status_code == 409:  # created, never started: nothing to check
                        continue
                    logged = [step["move"] for step in replay.json()["steps"][1:]]
                    told = [
                        player.accepted[(match_id, ply)]
                        for ply in range(len(logged))
                        if (match_id, ply) in player.accepted
                    ]
                    assert logged == told, f"match {match_id}: log {logged} vs accepted {told}"
                    assert len(logged) == replay.json()["ply"]
        for player in players:
            player.http.close()
    finally:
        if server is not None:
            stop_process_group(server)
        pg.stop(mode="immediate")
        pg.remove()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


# --- Redis restarted under a running tournament -----------------------------------------


@pytest.mark.real_services
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(420)  # above the waits below, so that a stall reports the matches
def test_redis_restart_mid_tournament_finishes_it_with_every_match_once(tmp_path):
    from celery import Celery
    from django.contrib.auth import get_user_model
    from kombu import Connection

    from bots.models import Bot
    from games.models import Match
    from tournaments.creation import tournament_create
    from tournaments.models import Tournament, TournamentMatch
    from tournaments.services import inline_play, tournament_start, tournaments_watchdog

    redis = PrivateRedis(tmp_path / "redis")
    redis.start()
    worker = None
    try:
        # A transactional test starts from an empty database: no built-in bots.
        owner = get_user_model().objects.create_user(username="fault-owner")
        bots = [
            Bot.objects.create(
                name=f"fault-random-{i}", owner=owner, kind="builtin", builtin="random",
                games=["durak"],
            )
            for i in range(4)
        ]  # fmt: skip
        # 72 matches in 3 rounds of 24.
        tournament = tournament_create(
            creator=None, name="redis restart", game="durak", players=2, bots=bots,
            games_per_pairing=12, move_time_limit=10.0, rated=False,
        )  # fmt: skip
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "cardserver.settings",
            "DATABASE_URL": worker_database_url(),
            "CELERY_BROKER_URL": redis.url,
            "CARDSERVER_VAR_DIR": str(tmp_path / "var"),
            "LOG_LEVEL": "WARNING",
            # A write per move: matches last long enough for Redis to go down mid-way (16
            # built-in moves a write would finish the tournament in a second or two).
            "BOTS_BUILTIN_MOVES_PER_WRITE": "1",
        }
        environment.pop("CELERY_TASK_ALWAYS_EAGER", None)
        worker_log = tmp_path / "worker.log"
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--pool=prefork",
             "--concurrency=2", "--without-mingle", "--without-gossip"],
            cwd=BASE_DIR, env=environment, stdout=subprocess.DEVNULL,
            stderr=worker_log.open("ab"), start_new_session=True,
        )  # fmt: skip
        # Start the tournament as tournament_start does, with the first round's messages
        # sent to the private Redis (this process's Celery app uses the shared broker).
        with inline_play():
            tournament_start(tournament_id=tournament.pk)
        # An app of its own that does not become the current one (shared tasks would send
        # through it after this test), on an explicit connection (a Celery app takes
        # CELERY_BROKER_URL, CI's shared Redis, before the broker it is given).
        sender = Celery(set_as_current=False)

        def send(tm_ids) -> None:
            with Connection(redis.url) as broker:
                for tm_id in tm_ids:
                    sender.send_task(
                        "tournaments.tasks.play_tournament_match", args=[tm_id], connection=broker
                    )

        send(
            TournamentMatch.objects.filter(tournament=tournament, round=0).values_list(
                "pk", flat=True
            )
        )
        watched_at = [time.monotonic()]

        def finished() -> bool:
            # What beat's tournaments_watchdog does every minute: a message a worker had
            # received but not started when Redis went down stays in Redis's unacknowledged
            # set until the visibility timeout, so its match is sent again once stale.
            if time.monotonic() - watched_at[0] > 10:
                watched_at[0] = time.monotonic()
                with inline_play():  # return the stale matches; this test sends them
                    send(tournaments_watchdog(stale_after=30))
            return Tournament.objects.get(pk=tournament.pk).status == Tournament.Status.FINISHED

        def done() -> int:
            return Tournament.objects.values_list("matches_done", flat=True).get(
                pk=tournament.pk
            )

        total = tournament.matches_total
        try:
            # Three crashes, each once more matches are done: a worker must outlive every
            # lost connection (Celery 5.7.0's did not, now and then).
            for crash in (1, 2, 3):
                wait_until(
                    lambda crash=crash: done() >= total * crash // 5,
                    timeout=60,
                    what=f"{crash} fifth(s) of the matches",
                )
                assert done() < total, "the tournament ended before Redis could be restarted"
                redis.stop(signal.SIGKILL)  # a crash; the append-only file keeps the queue
                time.sleep(2)
                redis.start()
            wait_until(finished, timeout=240, what="the tournament to finish")
        except TimeoutError as exc:
            states = list(
                TournamentMatch.objects.filter(tournament=tournament).values_list(
                    "round", "index", "status", "attempts"
                )
            )
            pytest.fail(f"{exc}; matches {states}; worker:\n{worker_log.read_text()[-3000:]}")

        assert worker.poll() is None, f"the worker died:\n{worker_log.read_text()[-3000:]}"
        tournament.refresh_from_db()
        assert tournament.matches_done == total
        tms = TournamentMatch.objects.filter(tournament=tournament)
        assert set(tms.values_list("status", flat=True)) == {"finished"}
        match_ids = list(tms.values_list("match_id", flat=True))
        assert len(set(match_ids)) == total
        # No game was created twice: the database holds exactly the tournament's matches.
        assert Match.objects.count() == total
        for match in Match.objects.all():
            assert match.status == Match.Status.FINISHED
            plies = list(match.moves.order_by("ply").values_list("ply", flat=True))
            assert plies == list(range(match.ply))
    finally:
        if worker is not None:
            stop_process_group(worker, timeout=60)
        redis.stop(signal.SIGKILL)
