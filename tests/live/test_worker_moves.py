"""Changes a Celery worker makes (another process) reach the streams, on either hub.

The server runs in this process (tests/live/server.py); a solo Celery worker in another
process plays the built-in bot's moves and the clock's forfeits, as ``make run``'s worker
does, and publishes them on the hub under test (``live_hub``): without Redis, to the
server's socket. No one else follows the match: what a stream shows of the worker's
moves came to it through the hub.
"""

from __future__ import annotations

import random
import threading
import uuid
from pathlib import Path

import httpx
import pytest

from accounts.tokens import token_create
from benchmarks.harness import wait_until
from bots import services as bot_services
from bots import tasks as bot_tasks
from bots.models import Bot
from cardkit.serve import load_strategy
from cardkit.server import make_server
from cardserver.health import worker_queues
from games import tasks as match_tasks
from games.models import Match, Move
from games.seating import SeatHolder
from games.services import match_create
from tests.live.server import headers_for, open_stream
from tests.live.test_streams import assert_every_ply_once, call
from tests.processes import clean_environment, start_solo_worker, worker_database_url

pytestmark = pytest.mark.django_db(transaction=True)

ACCOUNT_STREAM = "/api/v1/stream/events/"
SECRET = "worker-moves-secret"


@pytest.fixture
def worker(live_hub, monkeypatch):
    """Start a Celery worker reading a queue of this test's own, and send it this process's
    turn notices and deadline watches; it publishes on ``live_hub`` ("off": embedded)."""
    from django.conf import settings

    queue = f"test-live-{uuid.uuid4().hex}"
    monkeypatch.setattr(
        bot_tasks.match_turn_started, "delay",
        lambda *args: bot_tasks.match_turn_started.apply_async(args, queue=queue),
    )  # fmt: skip
    monkeypatch.setattr(
        match_tasks, "deadline_watch_send",
        lambda match_id, countdown: match_tasks.enforce_move_deadline.apply_async(
            (match_id,), countdown=countdown, queue=queue
        ),
    )  # fmt: skip
    environment = clean_environment(
        Path(settings.VAR_DIR),  # the embedded broker's folders are this process's
        DJANGO_SETTINGS_MODULE="cardserver.settings",
        DATABASE_URL=worker_database_url(),
        CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
        LIVE_PUBSUB_URL=live_hub or "off",
    )
    process = start_solo_worker(queue, environment)
    try:
        wait_until(
            lambda: any(queue in queues for queues in worker_queues(1.0).values()),
            timeout=60, what="the worker to read its queue",
        )  # fmt: skip
        yield process
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=60)
        assert "Traceback" not in errors, errors


@pytest.fixture
def http_bot(user):
    """Return an HTTP bot of ``user``'s: the kit's server, playing at random, on 127.0.0.1."""
    server = make_server(load_strategy("random", seed=3), 0, SECRET)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    yield Bot.objects.create(
        name="worker-http", owner=user, kind="http", url=url, secret=SECRET, games=["durak"]
    )
    server.shutdown()
    server.server_close()


def against(user, opponent: Bot | None = None, *, move_time_limit: float) -> Match:
    """Start a match of ``user`` (seat 0) against ``opponent`` (by default the built-in
    ``random``), which the arena (the worker) plays."""
    if opponent is None:
        opponent = next(bot for bot in bot_services.builtin_bots_ensure() if bot.name == "random")
    return match_create(
        creator=user, game="durak", players=2, move_time_limit=move_time_limit,
        seats=[SeatHolder(user=user), SeatHolder(bot=opponent)],
    )  # fmt: skip


def seat_moves(match: Match, seat: int) -> list[int]:
    return list(
        Move.objects.filter(match=match, seat=seat).order_by("ply").values_list("ply", flat=True)
    )


@pytest.mark.parametrize("kind", ["builtin", "http"])
def test_a_worker_s_moves_reach_the_account_stream_of_a_match_no_one_watches(
    server, worker, user, kind, request
):
    """The player moves only when its account stream says so (as the kit's client does):
    a turn that follows a worker's move (a built-in's, or an HTTP bot's answer) and is not
    announced would lose on time."""
    opponent = request.getfixturevalue("http_bot") if kind == "http" else None
    token = token_create(user=user)[1]
    rng = random.Random(7)
    seen: list[dict] = []
    with (
        httpx.Client(base_url=server.url, timeout=20) as client,
        open_stream(client, ACCOUNT_STREAM, token=token, ndjson=True) as account,
    ):
        match = against(user, opponent, move_time_limit=10)
        while not seen or seen[-1]["event"] != "match_finished":
            seen.append(account.next())
            if seen[-1]["event"] == "your_turn":
                turn = seen[-1]["data"]
                answer = call(
                    client, "POST", f"/api/v1/matches/{turn['match']}/moves/",
                    headers=headers_for(token),
                    json={"ply": turn["ply"], "move": rng.choice(turn["legal_moves"])},
                )  # fmt: skip
                assert answer.status_code == 200, answer.text
    match.refresh_from_db()
    assert seen[0]["event"] == "match_started" and seen[0]["data"]["match"] == match.pk
    assert seen[-1]["data"]["end_reason"] != "timeout", seen[-1]
    assert match.status == Match.Status.FINISHED and match.forfeit_seat is None
    assert seat_moves(match, 1), "the worker played no move"
    turns = [event["data"]["ply"] for event in seen if event["event"] == "your_turn"]
    assert turns == seat_moves(match, 0)


def test_a_worker_s_moves_reach_the_match_stream_every_ply_once(server, worker, user):
    token = token_create(user=user)[1]
    rng = random.Random(8)
    match = against(user, move_time_limit=10)
    seen: list[dict] = []
    with (
        httpx.Client(base_url=server.url, timeout=20) as client,
        open_stream(client, f"/api/v1/matches/{match.pk}/stream/", token=token) as stream,
    ):
        while not seen or seen[-1]["event"] != "end":
            seen.append(stream.next())
            state = seen[-1]["data"]
            if seen[-1]["event"] == "state" and state["your_turn"]:
                answer = call(
                    client, "POST", f"/api/v1/matches/{match.pk}/moves/",
                    headers=headers_for(token),
                    json={"ply": state["ply"], "move": rng.choice(state["legal_moves"])},
                )  # fmt: skip
                assert answer.status_code == 200, answer.text
    match.refresh_from_db()
    assert seen[-1]["data"]["end_reason"] != "timeout", seen[-1]
    assert seat_moves(match, 1), "the worker played no move"
    assert_every_ply_once(seen, match.ply)


def test_a_forfeit_on_the_clock_by_the_worker_reaches_the_account_stream(server, worker, user):
    token = token_create(user=user)[1]
    with (
        httpx.Client(base_url=server.url, timeout=20) as client,
        open_stream(client, ACCOUNT_STREAM, token=token, ndjson=True) as account,
    ):
        match = against(user, move_time_limit=1)
        events = account.until("match_finished")  # the player never moves
    match.refresh_from_db()
    assert events[0]["event"] == "match_started"
    assert events[-1]["data"]["end_reason"] == "timeout"
    assert (match.end_reason, match.forfeit_seat) == ("timeout", 0)
