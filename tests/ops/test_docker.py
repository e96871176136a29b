"""docker/: the image's and compose file's processes, run directly (no Docker engine here).

The test reads docker/compose.yaml and docker/Dockerfile, and runs what they run with the
environment compose gives, on a private PostgreSQL and Redis: the image's collectstatic,
the migrate service, gunicorn with the image's command, a worker and beat; then the
web and worker health checks, as compose runs them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from benchmarks.compose import (
    COMPOSE,
    DOCKERFILE,
    compose_shell,
    image_command,
    service_environment,
)
from benchmarks.harness import free_port, stop_process_group, wait_until
from tests.ops.services import PrivatePostgres, PrivateRedis
from tests.processes import BASE_DIR, SETTINGS_VARIABLES

# Two players and a started match, printed as its id (run with `manage.py shell -c`).
MAKE_MATCH = """
from django.contrib.auth import get_user_model
from games.seating import SeatHolder
from games.services import match_create
users = [get_user_model().objects.create_user(f"docker{i}") for i in range(2)]
match = match_create(creator=users[0], game="durak", players=2,
                     seats=[SeatHolder(user=u) for u in users])
print(match.pk)
"""
def test_every_app_service_takes_its_settings_from_the_environment():
    app = COMPOSE["x-app"]["environment"]

    assert app["DEBUG"] == "0"
    assert app["SECRET_KEY"].startswith("${SECRET_KEY:?")
    assert app["LOG_FORMAT"] == "json"
    assert "CACHE_URL" in app and "CELERY_BROKER_URL" in app and "DATABASE_URL" in app
    for name in ("web", "api", "worker", "interactive", "bot-calls", "beat", "migrate"):
        assert COMPOSE["services"][name]["environment"] == app
    assert set(COMPOSE["volumes"]) == {"postgres-data", "redis-data"}
    for name in ("postgres", "redis", "web", "api", "worker", "interactive", "bot-calls"):
        assert "healthcheck" in COMPOSE["services"][name]


def test_the_image_runs_as_a_user_without_privileges_and_collects_static_files():
    assert re.search(r"^USER arena$", DOCKERFILE, re.MULTILINE)
    assert "collectstatic --noinput" in DOCKERFILE
    assert "pip install ." in DOCKERFILE
    assert image_command()[:4] == [
        "gunicorn", "-c", "python:cardserver.gunicorn", "cardserver.asgi:application"
    ]


@pytest.mark.real_services
def test_compose_processes_serve_the_arena_and_pass_their_health_checks(tmp_path):
    pg = PrivatePostgres().init()
    pg.start()
    redis = PrivateRedis(tmp_path / "redis")
    redis.start()
    processes: list[subprocess.Popen] = []
    try:
        port = free_port()
        variables = {
            "SECRET_KEY": secrets.token_urlsafe(50),
            "POSTGRES_PASSWORD": "unused-with-trust",
            "ALLOWED_HOSTS": "arena.example.org",
            "LOG_LEVEL": "INFO",
        }
        environment = service_environment(variables)
        # Compose's service names are host names in its network; here, the private servers.
        environment["DATABASE_URL"] = pg.createdb("arena")
        environment["CELERY_BROKER_URL"] = redis.url
        environment["CACHE_URL"] = redis.url.replace("/0", "/1")
        base = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
        base.update(environment, CARDSERVER_VAR_DIR=str(tmp_path / "var"))
        base["PATH"] = f"{Path(sys.executable).parent}:{base['PATH']}"
        logs = tmp_path / "logs"
        logs.mkdir()

        # The image's build step, then the migrate service.
        static = subprocess.run(
            ["python", "manage.py", "collectstatic", "--noinput"],
            cwd=BASE_DIR, timeout=300, capture_output=True, text=True,
            env={**base, "DEBUG": "0", "SECRET_KEY": "collectstatic-only",
                 "ALLOWED_HOSTS": "localhost"},
        )  # fmt: skip
        assert static.returncode == 0, static.stderr
        assert (tmp_path / "var" / "static" / "staticfiles.json").exists()
        migrate = COMPOSE["services"]["migrate"]["command"]
        subprocess.run(migrate, cwd=BASE_DIR, env=base, check=True, timeout=300)

        def start(name: str, command: list[str]) -> None:
            processes.append(
                subprocess.Popen(
                    command, cwd=BASE_DIR, env=base, stdout=(logs / f"{name}.log").open("ab"),
                    stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            )

        web = [arg.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for arg in image_command()]
        start("web", web)
        start("worker", COMPOSE["services"]["worker"]["command"])
        start("interactive", compose_shell(COMPOSE["services"]["interactive"]["command"]))
        start("bot-calls", compose_shell(COMPOSE["services"]["bot-calls"]["command"]))
        start("beat", COMPOSE["services"]["beat"]["command"])

        # The health checks, as compose runs them in the containers.
        web_check = [
            arg.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
            for arg in COMPOSE["services"]["web"]["healthcheck"]["test"][1:]
        ]
        hostname = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
        worker_check, calls_check, interactive_check = (
            COMPOSE["services"][name]["healthcheck"]["test"][1].replace("$$HOSTNAME", hostname)
            for name in ("worker", "bot-calls", "interactive")
        )

        def passes(command: list[str]) -> bool:
            return subprocess.run(command, cwd=BASE_DIR, env=base, capture_output=True,
                                  timeout=60).returncode == 0  # fmt: skip

        wait_until(lambda: passes(web_check), timeout=90, what="the web health check")
        wait_until(
            lambda: passes(["sh", "-c", worker_check]), timeout=90, what="the worker health check"
        )
        wait_until(
            lambda: passes(["sh", "-c", calls_check]), timeout=90,
            what="the bot-calls worker health check",
        )  # fmt: skip
        wait_until(
            lambda: passes(["sh", "-c", interactive_check]), timeout=90,
            what="the interactive worker health check",
        )  # fmt: skip

        def health() -> dict:
            return httpx.get(
                f"http://127.0.0.1:{port}/api/v1/health/", headers={"Host": "arena.example.org"}
            ).json()

        # The web server keeps its last ping of the workers for HEALTH_WORKER_CACHE seconds.
        wait_until(
            lambda: health()["workers"]["answered"] >= 1, timeout=60, what="a worker in health"
        )
        assert health()["status"] == "ok"
        # Production settings: HTTPS is left to a proxy here, and other hosts are refused.
        other_host = httpx.get(f"http://127.0.0.1:{port}/api/v1/games/")
        assert other_host.status_code == 400
        games = httpx.get(
            f"http://127.0.0.1:{port}/api/v1/games/", headers={"Host": "arena.example.org"}
        )
        assert games.status_code == 200
        assert games.headers["X-Frame-Options"] == "DENY"
        # Static files come from the collected folder (WhiteNoise).
        assert httpx.get(
            f"http://127.0.0.1:{port}/static/web/arena.css",
            headers={"Host": "arena.example.org"},
        ).status_code == 200
        # So do the API docs' Swagger UI and ReDoc (drf-spectacular-sidecar), no CDN.
        for page in ("/api/v1/docs/", "/api/v1/redoc/"):
            html = httpx.get(
                f"http://127.0.0.1:{port}{page}", headers={"Host": "arena.example.org"}
            ).text
            assert "://" not in html, page
            for url in re.findall(r'(?:src|href)="([^"]+)"', html):
                # Every link is this site's; the static files among them are served.
                assert url.startswith("/") and not url.startswith("//"), url
                if not url.startswith("/static/"):
                    continue
                assert httpx.get(
                    f"http://127.0.0.1:{port}{url}", headers={"Host": "arena.example.org"}
                ).status_code == 200, url
        # A match's stream, on the image's server: its state, then, when the server is
        # told to stop (SIGTERM, as `docker compose stop` sends), the reconnect event.
        match_id = subprocess.run(
            ["python", "manage.py", "shell", "-c", MAKE_MATCH], cwd=BASE_DIR, env=base,
            capture_output=True, text=True, check=True, timeout=120,
        ).stdout.strip().splitlines()[-1]  # fmt: skip
        with httpx.stream(
            "GET", f"http://127.0.0.1:{port}/api/v1/matches/{match_id}/stream/",
            headers={"Host": "arena.example.org"}, timeout=20,
        ) as stream:  # fmt: skip
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            assert "event: state" in [next(lines) for _ in range(4)]
            os.killpg(processes[0].pid, signal.SIGTERM)
            rest = list(lines)
        assert "event: reconnect" in rest
        processes[0].wait(timeout=30)
        time.sleep(1)
    finally:
        for process in processes:
            stop_process_group(process)
        redis.stop(signal.SIGKILL)
        pg.stop(mode="immediate")
        pg.remove()

    # Every line the web server wrote is one JSON object.
    web_lines = (logs / "web.log").read_text().splitlines()
    assert web_lines
    for line in web_lines:
        assert isinstance(json.loads(line), dict), line
    assert any(json.loads(line).get("path") == "/api/v1/games/" for line in web_lines)
    streamed = [json.loads(line) for line in web_lines if "/stream/" in line]
    assert streamed and streamed[-1]["match_id"] == int(match_id)
    assert streamed[-1]["status"] == 200


def test_bot_calls_worker_reads_only_the_call_queue_with_threads_that_hand_calls_over():
    worker = COMPOSE["services"]["worker"]["command"]
    calls = shlex.split(compose_shell(COMPOSE["services"]["bot-calls"]["command"])[2])

    assert worker[worker.index("-Q") + 1] == "celery"
    assert calls[calls.index("-Q") + 1] == "bot-calls"
    assert "--pool=threads" in calls
    assert any(arg.startswith("--concurrency=${BOT_CALLS_CONCURRENCY:-") for arg in calls)
    # A few threads only hand calls to the event loop (README: 8); compose's environment
    # once set 1,000, a thread per call as before the loop.
    environment = service_environment({"SECRET_KEY": "x" * 50, "POSTGRES_PASSWORD": "x"})
    assert environment["BOT_CALLS_CONCURRENCY"] == "8"


def test_interactive_worker_reads_only_the_interactive_queue():
    interactive = shlex.split(compose_shell(COMPOSE["services"]["interactive"]["command"])[2])

    assert interactive[interactive.index("-Q") + 1] == "interactive"
    assert "-n" in interactive and interactive[interactive.index("-n") + 1] == "interactive@%h"


def test_compose_needs_a_secret_key_and_a_database_password():
    with pytest.raises(KeyError, match="SECRET_KEY"):
        service_environment({"POSTGRES_PASSWORD": "x"})
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
        service_environment({"SECRET_KEY": "x" * 50})


def test_worker_health_check_names_the_container_worker():
    check = COMPOSE["services"]["worker"]["healthcheck"]["test"]

    assert check[0] == "CMD-SHELL"
    assert shlex.split(check[1])[:5] == ["celery", "-A", "cardserver", "inspect", "ping"]
