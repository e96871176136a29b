"""GET /api/v1/health/: database, broker and workers."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from django.db import OperationalError, connection

from cardserver import health, views
from tests.processes import start_solo_worker


@pytest.fixture(autouse=True)
def fresh_worker_ping(settings, monkeypatch):
    """Ping the workers on every request, briefly."""
    settings.HEALTH_WORKER_CACHE = 0
    settings.HEALTH_WORKER_TIMEOUT = 0.2
    monkeypatch.setattr(views, "_workers_seen", None)


@pytest.fixture
def workers_answer(monkeypatch):
    """Make the workers' broadcast answer with the given worker names (reading no queue)."""

    def answer(*names: str) -> None:
        monkeypatch.setattr(health, "worker_queues", lambda timeout: {name: [] for name in names})

    return answer


@pytest.mark.django_db
def test_health_reports_database_broker_and_workers(api_client, workers_answer):
    workers_answer("celery@a", "celery@b")

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 200
    body = response.json()
    # Neither reads the call queue (tests/ops/test_health_bot_calls.py).
    assert body.pop("bot_calls")["status"] == "none"
    assert body.pop("matches")["status"] == "ok"
    assert body == {
        "status": "ok",
        "database": "ok",
        "broker": "ok",
        "workers": {"status": "ok", "answered": 2, "names": ["celery@a", "celery@b"]},
    }


@pytest.mark.django_db
def test_no_worker_answering_is_reported_but_still_healthy(api_client, workers_answer):
    workers_answer()

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 200
    assert response.json()["workers"] == {"status": "none", "answered": 0, "names": []}


@pytest.mark.django_db
def test_workers_that_cannot_be_pinged_are_unknown_not_none(api_client, monkeypatch):
    def no_remote_control(timeout):
        raise NotImplementedError("this transport has no fanout")

    monkeypatch.setattr(health, "worker_queues", no_remote_control)

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 200
    assert response.json()["workers"] == {"status": "unknown", "answered": None, "names": []}


def test_database_down_answers_503(api_client, monkeypatch, workers_answer):
    workers_answer("celery@a")

    def broken_cursor(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", broken_cursor)

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["database"] == "error"
    assert response.json()["broker"] == "ok"


@pytest.mark.django_db
def test_broker_down_answers_503_quickly_with_workers_unknown(api_client, monkeypatch, settings):
    settings.HEALTH_BROKER_TIMEOUT = 0.5
    # Nothing listens on port 1.
    monkeypatch.setattr(views, "_broker_url", lambda: "redis://127.0.0.1:1/0")
    started = time.monotonic()

    response = api_client.get("/api/v1/health/")

    assert time.monotonic() - started < 5
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "database": "ok",
        "broker": "error",
        "workers": {"status": "unknown", "answered": None, "names": []},
        "bot_calls": {"status": "unknown", "consumers": [], "queue_depth": None},
        "matches": {"status": "ok", "stalled": 0, "oldest_seconds": None, "oldest_match": None},
    }


@pytest.mark.django_db
def test_worker_answer_is_reused_for_the_cache_time(api_client, settings, monkeypatch):
    settings.HEALTH_WORKER_CACHE = 60
    pings = []
    monkeypatch.setattr(health, "worker_queues", lambda timeout: pings.append(1) or {})

    for _ in range(3):
        api_client.get("/api/v1/health/")

    assert len(pings) == 1


@pytest.mark.django_db
def test_health_is_exempt_from_the_https_redirect(client, settings):
    settings.SECURE_SSL_REDIRECT = True

    assert client.get("/api/v1/health/").status_code in (200, 503)
    assert client.get("/api/v1/games/").status_code == 301


@pytest.mark.real_services
@pytest.mark.django_db
def test_a_running_worker_answers_the_health_ping(api_client, settings):
    settings.HEALTH_WORKER_TIMEOUT = 1.0
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "cardserver.settings"}
    worker = start_solo_worker(
        "health-test", environment, "-n", f"health-test-{os.getpid()}@%h",
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            body = api_client.get("/api/v1/health/").json()
            names = body["workers"]["names"]
            if any(name.startswith(f"health-test-{os.getpid()}@") for name in names):
                break
            assert time.monotonic() < deadline, body
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=60)

    assert body["status"] == "ok"
    assert body["workers"]["status"] == "ok"
    assert body["workers"]["answered"] >= 1


@pytest.mark.django_db
def test_matches_without_progress_past_the_bound_are_reported_with_the_oldest(
    api_client, workers_answer, user_factory, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from games.models import Match
    from tests.matches import start_match

    workers_answer("celery@a")
    settings.MATCHES_STALLED_AFTER = 60.0
    now = timezone.now()
    moving, late, oldest = (start_match([user_factory(), user_factory()]) for _ in range(3))
    # Due 30 s ago: the sweep forfeits it in a moment; not stalled yet.
    Match.objects.filter(pk=moving.pk).update(
        turn_started_at=now - timedelta(seconds=35), deadline_at=now - timedelta(seconds=30)
    )
    Match.objects.filter(pk=late.pk).update(
        turn_started_at=now - timedelta(seconds=125), deadline_at=now - timedelta(seconds=120)
    )
    Match.objects.filter(pk=oldest.pk).update(
        turn_started_at=now - timedelta(seconds=605), deadline_at=now - timedelta(seconds=600)
    )

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 200 and response.json()["status"] == "ok"
    matches = response.json()["matches"]
    assert (matches["status"], matches["stalled"], matches["oldest_match"]) == (
        "stalled", 2, oldest.pk,
    )
    assert 605 <= matches["oldest_seconds"] < 700
