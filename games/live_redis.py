"""The live hub's Redis connection: subscribed to the keys its waiters follow, no other.

A web process's hub (``games.live``) holds one connection to ``LIVE_PUBSUB_URL``. It
``SUBSCRIBE``s to a key's channel when the key's first waiter registers, and
``UNSUBSCRIBE``s ``LIVE_UNSUBSCRIBE_AFTER`` seconds after its last one left (one sweep
for every key, not a timer each): a process is sent nothing of a match none of its
clients follows. A pattern over every key, as before, made each process receive and
parse every move of the arena in its event loop, whoever followed it.

A subscription counts from Redis's confirmation, not from the command: a waiter reads
only once its keys are confirmed (``Waiter.ready``), and a key's waiters are woken to
read again whenever its subscription is confirmed, the first time or on a new connection
(every key is subscribed again after a reconnect), since a change may have gone by
unheard before. The keys registered in one turn of the event loop go out together, in
commands of up to ``_BATCH`` channels: thousands of streams opening at once cost a few
round trips, not thousands.

The connection is redis-py's (its parser, hiredis's when installed) without its
``PubSub``: that one resubscribes by itself on a reconnect, without telling, and reads
with timeouts, cancelling a read halfway. Here one task reads and another writes, and
pings show a dead connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import Iterable
from typing import Protocol

import orjson
from django.conf import settings


class Hub(Protocol):
    """What the subscriptions need of ``games.live.Hub``: its loop, its waiters' keys, and
    delivery to a key's waiters.

    A protocol, not an import: ``games.live`` builds on this module, never the reverse.
    """

    loop: asyncio.AbstractEventLoop
    _waiters: dict[str, set]

    def deliver(self, key: str, message: dict | None) -> None: ...

logger = logging.getLogger(__name__)

# Seconds between pings of an idle connection; no answer in two means it is dead.
PING_EVERY = 15.0
# Channels per SUBSCRIBE (or UNSUBSCRIBE) command.
_BATCH = 1000


# Numbers the hubs of a process: one in a server's process, one per server's event loop in
# a process that runs several (the tests' servers run in threads of the test process).
_hub_numbers = itertools.count(1)


def hub_client_name(prefix: str, number: int) -> str:
    """The name of a hub's Redis connection (``CLIENT LIST``): its channels' prefix, its
    pid and the hub's number in the process."""
    return f"live-hub:{prefix}{os.getpid()}:{number}".replace(" ", "_")


class RedisSubscriptions:
    """What one hub is subscribed to, and the task that keeps it so and reads its messages.

    The keys wanted are those with waiters and, for ``LIVE_UNSUBSCRIBE_AFTER`` seconds,
    those whose last waiter left (``_idle``). ``_sent`` holds the keys whose latest
    command on the connection is a ``SUBSCRIBE``; ``_confirmed`` those Redis has confirmed
    since (it answers every command on every channel, so a key's answers still due are
    counted down in ``_due``); ``_dirty`` the keys whose wanted state may differ from what
    was sent, for the next flush. Everything here runs in the hub's loop.
    """

    def __init__(self, hub: Hub, url: str, prefix: str) -> None:
        # prefix: the channel prefix (``games.live.channel_prefix``), handed down by the hub.
        self.hub, self.url, self.prefix = hub, url, prefix
        self.number = next(_hub_numbers)
        self.messages = 0  # received: what this process was sent
        self._idle: dict[str, float] = {}  # key -> when its last waiter left
        self._sent: set[str] = set()
        self._confirmed: set[str] = set()
        self._due: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._flush_wanted = asyncio.Event()
        self._sweep: asyncio.TimerHandle | None = None
        self._last_read = hub.loop.time()

    def confirmed(self, keys: Iterable[str]) -> bool:
        return all(key in self._confirmed for key in keys)

    def watch(self, key: str) -> None:
        """``key`` has its first waiter."""
        if self._idle.pop(key, None) is None and key not in self._sent:
            self._dirty.add(key)
            self._flush_wanted.set()

    def unwatch(self, key: str) -> None:
        """``key``'s last waiter left: unsubscribe at a sweep, unless one comes back."""
        self._idle[key] = self.hub.loop.time()
        if self._sweep is None:
            self._sweep = self.hub.loop.call_later(settings.LIVE_UNSUBSCRIBE_AFTER, self._swept)

    def _swept(self) -> None:
        self._sweep = None
        after = settings.LIVE_UNSUBSCRIBE_AFTER
        now = self.hub.loop.time()
        for key, left in list(self._idle.items()):
            if now - left >= after:
                del self._idle[key]
                self._dirty.add(key)
        if self._dirty:
            self._flush_wanted.set()
        if self._idle:
            oldest = min(self._idle.values())
            self._sweep = self.hub.loop.call_later(max(0.0, oldest + after - now), self._swept)

    def _commands(self) -> tuple[list[str], list[str]]:
        """The keys to subscribe and to unsubscribe now, noted as sent."""
        subscribe, unsubscribe = [], []
        for key in self._dirty:
            wanted = key in self.hub._waiters or key in self._idle
            if wanted and key not in self._sent:
                self._sent.add(key)
                subscribe.append(key)
            elif not wanted and key in self._sent:
                self._sent.discard(key)
                self._confirmed.discard(key)
                unsubscribe.append(key)
            else:
                continue
            self._due[key] = self._due.get(key, 0) + 1
        self._dirty.clear()
        return subscribe, unsubscribe

    def _answered(self, kind: bytes, key: str) -> None:
        """Redis answered a command on ``key``: its last answer due confirms a subscription."""
        due = self._due.get(key, 0) - 1
        if due > 0:
            self._due[key] = due
            return
        self._due.pop(key, None)
        if kind == b"subscribe" and key in self._sent and key not in self._confirmed:
            self._confirmed.add(key)
            # A change may have gone by unheard before this: its waiters read again.
            self.hub.deliver(key, None)

    def _disconnected(self) -> None:
        """The subscriptions went with the connection; the next one makes them again."""
        self._sent.clear()
        self._confirmed.clear()
        self._due.clear()
        self._idle.clear()

    async def listen(self) -> None:
        """Keep a connection subscribed, deliver its messages; reconnect when it is lost."""
        from redis.asyncio.connection import ConnectionPool

        prefix = self.prefix
        skip = len(prefix)
        pause = 0.1
        pool = ConnectionPool.from_url(
            self.url, socket_connect_timeout=5, socket_keepalive=True,
            client_name=hub_client_name(prefix, self.number),
        )  # fmt: skip
        while True:
            connection = pool.make_connection()
            sender = None
            try:
                await connection.connect()
                self._dirty = set(self.hub._waiters)
                self._flush_wanted.set()
                sender = self.hub.loop.create_task(self._send(connection, prefix))
                pause = 0.1
                while True:
                    # No read timeout: a read cancelled halfway would lose its place in
                    # the stream; the pings show a dead connection instead. Not
                    # disconnected on an error either: the sender would connect it again.
                    response = await connection.read_response(
                        timeout=None, disconnect_on_error=False
                    )
                    self._last_read = self.hub.loop.time()
                    if not isinstance(response, list):
                        continue  # a PONG while nothing is subscribed
                    kind = response[0]
                    if kind == b"message":
                        self.messages += 1
                        self.hub.deliver(response[1][skip:].decode(), orjson.loads(response[2]))
                    elif kind in (b"subscribe", b"unsubscribe"):
                        self._answered(kind, response[1][skip:].decode())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("live: Redis pub/sub lost (%s); reconnecting", exc)
            finally:
                # The sender first: nothing it sends from now on is noted as sent.
                if sender is not None:
                    sender.cancel()
                with contextlib.suppress(Exception):
                    await connection.disconnect(nowait=True)
                self._disconnected()
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)

    async def _send(self, connection, prefix: str) -> None:
        """Send the (un)subscriptions wanted, batched, and a ping when the line is quiet."""
        self._last_read = self.hub.loop.time()
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._flush_wanted.wait(), PING_EVERY)
                self._flush_wanted.clear()
                subscribe, unsubscribe = self._commands()
                for command, keys in (("UNSUBSCRIBE", unsubscribe), ("SUBSCRIBE", subscribe)):
                    for start in range(0, len(keys), _BATCH):
                        channels = [prefix + key for key in keys[start : start + _BATCH]]
                        await connection.send_command(command, *channels, check_health=False)
                now = self.hub.loop.time()
                if now - self._last_read > 2 * PING_EVERY:
                    raise ConnectionError("no answer to two pings")
                if not (subscribe or unsubscribe) and now - self._last_read >= PING_EVERY:
                    await connection.send_command("PING", check_health=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Closing the connection ends the reader's read, and the reader reconnects.
            logger.warning("live: Redis pub/sub send failed (%s)", exc)
            await connection.disconnect(nowait=True)
