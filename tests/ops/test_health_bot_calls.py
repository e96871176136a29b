"""GET /api/v1/health/ shows whether a worker reads the HTTP bots' call queue: without
one, every HTTP bot's call would wait in the queue while the rest of the site looks well."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cardserver import views

BASE_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture
def call_queue(settings, monkeypatch):
    """A call queue of this test's own, asked afresh at every request."""
    settings.HEALTH_WORKER_CACHE = 0
    settings.HEALTH_WORKER_TIMEOUT = 1.0
    monkeypatch.setattr(views, "_workers_seen", None)
    settings.BOTS_CALL_QUEUE = f"test-health-{uuid.uuid4().hex}-bot-calls"
    return settings.BOTS_CALL_QUEUE


def bot_calls(api_client) -> dict:
    response = api_client.get("/api/v1/health/")
    assert response.status_code == 200
    return response.json()["bot_calls"]


@pytest.mark.django_db
def test_no_call_queue_is_reported_off(api_client, settings):
    settings.BOTS_CALL_QUEUE = ""

    assert bot_calls(api_client) == {"status": "off", "consumers": [], "queue_depth": None}


@pytest.mark.real_services
@pytest.mark.django_db
def test_a_call_queue_no_worker_reads_is_reported_none_with_its_depth_until_one_does(
    api_client, call_queue, tmp_path
):
    from bots.tasks import bot_call

    # A call for no match: the pool finds no claim for it and drops it.
    call = {
        "match_id": 0, "ply": 0, "seat": 0, "bot_id": 0, "owner_id": 0, "holder": "h",
        "url": "http://127.0.0.1:1/", "secret": "s", "payload": {}, "time_limit": 1.0,
        "queued_at": time.time(), "send_by": time.time() - 1, "recovers": False,
    }  # fmt: skip
    bot_call.apply_async((call,), queue=call_queue)

    assert bot_calls(api_client) == {"status": "none", "consumers": [], "queue_depth": 1}

    node = f"health-calls-{uuid.uuid4().hex[:8]}@test"
    environment = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
    environment.update(DJANGO_SETTINGS_MODULE="cardserver.settings", LOG_LEVEL="WARNING")
    environment.update(CARDSERVER_VAR_DIR=str(tmp_path / "var"))
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--pool=threads",
         "--concurrency=2", "--without-mingle", "--without-gossip", "--loglevel=WARNING",
         "-Q", call_queue, "-n", node],
        cwd=BASE_DIR, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (seen := bot_calls(api_client))["consumers"] != [node]:
            assert time.monotonic() < deadline, seen
            time.sleep(0.5)
        while (seen := bot_calls(api_client))["queue_depth"] != 0:
            assert time.monotonic() < deadline, seen
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=60)

    assert seen["status"] == "ok"
