"""The I/O pool's commit of several moves publishes their Redis messages in one pipeline
(``games.live.publish_batched``), sent when the block ends, every message still sent."""

from __future__ import annotations

import time

import pytest
import redis

from games import live
from games.events import Change, MatchChanged
from tests.live.conftest import redis_url

pytestmark = [pytest.mark.real_services, pytest.mark.django_db]


@pytest.fixture
def pubsub_url(settings):
    url = redis_url()
    # Marked real_services: the pass that runs it has Redis, and a missing one is an error.
    assert url, "needs Redis: set CELERY_BROKER_URL or LIVE_PUBSUB_URL to a redis:// URL"
    settings.LIVE_PUBSUB_URL = url
    return url


def _received(pubsub, within: float) -> list[bytes]:
    got, end = [], time.monotonic() + within
    while time.monotonic() < end:
        message = pubsub.get_message(timeout=0.05)
        if message is not None and message["type"] == "message":
            got.append(message["channel"])
    return got


def _event(match_id: int, ply: int) -> MatchChanged:
    return MatchChanged(
        match_id=match_id, change=Change.MOVED, ply=ply, status="active", to_move=0
    )  # fmt: skip


def test_messages_announced_in_a_batch_are_sent_together_when_it_ends(pubsub_url):
    prefix = live.channel_prefix()
    channels = [f"{prefix}{live.match_key(n)}".encode() for n in (990001, 990002)]
    pubsub = redis.Redis.from_url(pubsub_url).pubsub()
    pubsub.subscribe(*channels)
    _received(pubsub, 0.3)  # the confirmations

    with live.publish_batched():
        live._publish(_event(990001, 4))
        live._publish(_event(990002, 7))
        assert _received(pubsub, 0.3) == []

    assert sorted(_received(pubsub, 1.0)) == sorted(channels)
    pubsub.close()


def test_a_message_outside_a_batch_is_sent_at_once(pubsub_url):
    channel = f"{live.channel_prefix()}{live.match_key(990003)}".encode()
    pubsub = redis.Redis.from_url(pubsub_url).pubsub()
    pubsub.subscribe(channel)
    _received(pubsub, 0.3)

    live._publish(_event(990003, 1))

    assert _received(pubsub, 1.0) == [channel]
    pubsub.close()
