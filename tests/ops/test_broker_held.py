"""Redis: a message that a live consumer holds stays its own past the visibility timeout,
and one whose consumer stopped renewing it goes back to its queue (cardserver/broker_held.py).
Before, the visibility timeout was two hours: a whole worker killed gave its tasks back
only then; and a timeout shorter than a task would have given a running task to a second
worker."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from kombu import Connection

from cardserver.broker_held import held_messages_renew, lapsed_messages_restore, redis_channel
from tests.processes import load_settings

pytestmark = pytest.mark.real_services

VISIBILITY = 1.5


@pytest.fixture
def connection():
    # Keys of the test's own: another worker on this Redis database restores only its own.
    own = uuid.uuid4().hex
    options = {
        "visibility_timeout": VISIBILITY,
        "unacked_key": f"unacked-{own}",
        "unacked_index_key": f"unacked_index-{own}",
        "unacked_mutex_key": f"unacked_mutex-{own}",
    }
    with Connection(os.environ["CELERY_BROKER_URL"], transport_options=options) as connection:
        yield connection


def held_message(connection: Connection):
    """Publish a message on a queue of its own and take it without acknowledging it."""
    queue = connection.SimpleQueue(f"test-held-{uuid.uuid4().hex}")
    queue.put({"task": "held"})
    message = queue.get(timeout=5)
    assert waiting(queue) == 0
    return queue, message


def waiting(queue) -> int:
    """The messages in the queue's list (kombu's passive declare fails on an empty one)."""
    with queue.channel.conn_or_acquire() as client:
        return client.llen(queue.queue.name)


def test_a_held_message_renewed_stays_with_its_consumer_past_the_visibility_timeout(connection):
    queue, message = held_message(connection)
    channel = queue.channel
    assert redis_channel(channel)

    for _ in range(6):  # 1.8 s, past the 1.5 s timeout
        time.sleep(VISIBILITY / 5)
        assert held_messages_renew(channel) == 1
        lapsed_messages_restore(channel)
    assert waiting(queue) == 0
    message.ack()
    assert held_messages_renew(channel) == 0


def test_a_held_message_no_longer_renewed_goes_back_to_its_queue(connection):
    queue, _message = held_message(connection)
    channel = queue.channel

    time.sleep(VISIBILITY + 0.3)
    lapsed_messages_restore(channel)

    assert waiting(queue) == 1
    assert queue.get(timeout=5).payload == {"task": "held"}


def test_an_acknowledged_message_is_not_put_back_by_a_late_renewal(connection):
    queue, message = held_message(connection)
    channel = queue.channel
    message.ack()

    # The tag is gone from the index: a renewal racing the acknowledgement writes nothing.
    with channel.conn_or_acquire() as client:
        client.zadd(channel.qos.unacked_index_key, {message.delivery_tag: time.time()}, xx=True)
        assert client.zcard(channel.qos.unacked_index_key) == 0
    time.sleep(VISIBILITY + 0.3)
    lapsed_messages_restore(channel)
    assert waiting(queue) == 0


def test_redis_visibility_timeout_is_bounded_and_outlasts_several_renewals(tmp_path):
    loaded = load_settings(tmp_path, CELERY_BROKER_URL="redis://127.0.0.1:6379/0")
    visibility_timeout = loaded["CELERY_BROKER_TRANSPORT_OPTIONS"]["visibility_timeout"]

    # A dead worker's tasks come back within a minute, as its claims lapse (bots.driver);
    # a live worker renews its messages several times within the timeout.
    assert visibility_timeout + loaded["REDIS_HELD_RENEW_EVERY"] <= 60
    assert visibility_timeout >= 5 * loaded["REDIS_HELD_RENEW_EVERY"]
