"""Redis: the messages a worker holds stay its own while it lives, and go back to their
queue soon after it dies.

Redis (kombu's transport) records when a worker took each message it has not yet
acknowledged (the sorted set ``unacked_index``), and puts back in its queue a message
taken longer ago than the broker's visibility timeout. Tasks are acknowledged after they
run (``acks_late``): a timeout shorter than the longest task would start a running match a
second time, and a long one (it was two hours) left the tasks of a worker killed outright
(SIGKILL, the machine lost: no connection closed cleanly to give them back) in nobody's
hands for that long. So every worker renews the time of each message it holds (running,
or waiting for its ETA) every ``REDIS_HELD_RENEW_EVERY`` seconds, as a driver renews its
claim on a match (``bots.driver``): a message older than the visibility timeout is one
whose worker stopped renewing it, and any live worker puts it back at its next look,
at most ``REDIS_HELD_RENEW_EVERY`` seconds later. The embedded broker does the same with
a claimed file's process id (``cardserver.broker.restore_dead_claims``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)


def held_messages_renew(channel: Any) -> int:
    """Mark every message this channel holds unacknowledged as taken now; return how many.

    Only messages still in the broker's index are touched (``ZADD XX``): one acknowledged
    meanwhile is not put back. Safe to call from a thread other than the worker's loop:
    it reads a copy of the held tags and writes through a client of the channel's pool.
    """
    qos = channel.qos
    tags: list = []
    for _ in range(3):
        try:
            # The worker's loop adds and acknowledges messages meanwhile.
            tags = [tag for tag in list(qos._delivered) if tag not in qos._dirty]
            break
        except RuntimeError:
            continue
    if not tags:
        return 0
    with channel.conn_or_acquire() as client:
        client.zadd(qos.unacked_index_key, dict.fromkeys(tags, time.time()), xx=True)
    return len(tags)


def lapsed_messages_restore(channel: Any) -> None:
    """Put back in their queues the messages whose worker stopped renewing them for the
    visibility timeout (kombu's ``restore_visible``, at every call rather than every
    tenth)."""
    channel.qos.restore_visible(num=channel.unacked_restore_limit, interval=1)


def redis_channel(channel: Any) -> bool:
    """Whether ``channel`` is kombu's Redis transport's (the only one with this index)."""
    return hasattr(getattr(channel, "qos", None), "unacked_index_key")


class HeldMessagesRenew(bootsteps.StartStopStep):
    """A worker's consumer step: renew the messages it holds and put back the lapsed ones,
    from a thread of its own (so a solo pool's long task blocks neither)."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self._stop: threading.Event | None = None

    def start(self, parent: Any) -> None:
        from django.conf import settings

        channel = parent.task_consumer.channel
        if not redis_channel(channel):
            return
        self._stop = stop = threading.Event()
        every = settings.REDIS_HELD_RENEW_EVERY
        threading.Thread(
            target=_renew_loop, args=(channel, stop, every), name="held-messages", daemon=True
        ).start()

    def stop(self, parent: Any) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    shutdown = stop


def _renew_loop(channel: Any, stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        try:
            held_messages_renew(channel)
            lapsed_messages_restore(channel)
        except Exception:
            # Redis away: the worker's own loop reconnects; this tries again next time.
            logger.warning("could not renew the held messages", exc_info=True)
