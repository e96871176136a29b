"""A Celery worker process plays a match between an HTTP bot and a built-in bot."""

from __future__ import annotations

import os
import uuid

import pytest

from bots import services
from bots.models import Bot
from cardkit.serve import load_strategy
from games.models import Match, Move
from games.seating import SeatHolder
from games.services import match_create
from games.verification import match_verification
from tests.matches import wait_while_active
from tests.processes import start_solo_worker, worker_database_url

SECRET = "worker-bot-secret"


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
        seats=[SeatHolder(bot=web), SeatHolder(bot=greedy)],
        move_time_limit=10,
    )
    # A queue of its own keeps this worker away from every other message on the broker.
    queue = f"test-bots-{uuid.uuid4().hex}"
    environment = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "DATABASE_URL": worker_database_url(),
        "CARDSERVER_VAR_DIR": str(tmp_path / "var"),
    }
    worker = start_solo_worker(queue, environment)
    try:
        from bots.tasks import play_bot_turns

        play_bot_turns.apply_async((match.pk,), queue=queue)
        wait_while_active(match)
    finally:
        worker.terminate()
        _, worker_errors = worker.communicate(timeout=60)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED, worker_errors
    assert match.forfeit_seat is None, match.forfeit_reason
    assert Move.objects.filter(match=match, seat=0).exists()
    assert Move.objects.filter(match=match, seat=1).exists()
    assert match_verification(match).ok
