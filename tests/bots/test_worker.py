"""A Celery worker process plays a match between an HTTP bot and a built-in bot."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from bots import services
from bots.kit.serve import load_strategy
from bots.models import Bot
from games.models import Match, Move
from games.selectors import match_verification
from games.services import match_create

BASE_DIR = Path(__file__).resolve().parents[2]
SECRET = "worker-bot-secret"


def test_database_url() -> str:
    """Return a URL of the test database, for another process."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )


test_database_url.__test__ = False  # A helper, not a test.


@pytest.mark.real_services
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_worker_plays_an_http_bot_match_to_the_end(
    tmp_path, user, kit_http_bot, no_match_tasks
):
    url, _server = kit_http_bot(SECRET, load_strategy("greedy", seed=4))
    web = Bot.objects.create(
        name="worker-web", owner=user, kind="http", url=url, secret=SECRET, games=["durak"]
    )
    greedy = next(bot for bot in services.builtin_bots_ensure() if bot.name == "greedy")
    match = match_create(
        creator=user,
        game="durak",
        players=2,
        seats=[{"bot": web}, {"bot": greedy}],
        move_time_limit=10,
    )
    # A queue of its own keeps this worker away from every other message on the broker.
    queue = f"test-bots-{uuid.uuid4().hex}"
    environment = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "DATABASE_URL": test_database_url(),
        "CARDSERVER_VAR_DIR": str(tmp_path / "var"),
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--pool=solo",
         "--without-mingle", "--without-gossip", "--loglevel=WARNING", "-Q", queue],
        cwd=BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        from bots.tasks import play_bot_turns

        play_bot_turns.apply_async((match.pk,), queue=queue)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            match.refresh_from_db()
            if match.status != Match.Status.ACTIVE:
                break
            time.sleep(0.2)
    finally:
        worker.terminate()
        _, worker_errors = worker.communicate(timeout=60)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED, worker_errors
    assert match.forfeit_seat is None, match.forfeit_reason
    assert Move.objects.filter(match=match, seat=0).exists()
    assert Move.objects.filter(match=match, seat=1).exists()
    assert match_verification(match).ok
