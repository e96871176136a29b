"""Live wake-ups: a change of a match wakes every waiter on it, in any web process.

After every committed change ``games`` announces ``MatchChanged`` (``games.events``); the
handler here turns it into one small message per *key*: ``m:<match id>`` (everyone
following the match) and ``a:<user id>`` for every account holding one of its seats (an
account's event stream). Each web process runs one ``Hub`` in its event loop, and every
waiter (a stream, a ``wait/``) registers the keys it cares about with it; a message wakes
the waiters of its key, in-process, without a query.

How messages cross processes (``LIVE_PUBSUB_URL``):

- **Redis pub/sub** (production; the default when ``CACHE_URL`` or the broker is Redis).
  The process that committed the change (a web process, a Celery worker) ``PUBLISH``es
  on ``<prefix>m:<id>`` and ``<prefix>a:<user>``; each web process holds one connection
  that ``SUBSCRIBE``s to the channels of the keys its own waiters follow, and to no
  other: a process is sent nothing of a match none of its waiters follows (a pattern over
  every key made each process receive and parse every move of the arena). A key is
  subscribed when its first waiter registers and unsubscribed ``LIVE_UNSUBSCRIBE_AFTER``
  seconds after its last one left (a client that reconnects, or a ``wait/`` asked again,
  finds it still there); the keys registered in one turn of the event loop go in one
  command. Redis is already there for the broker and the rate limits, it costs one round
  trip per change, and adding a web process on another machine needs nothing but the
  URL. (PostgreSQL ``LISTEN/NOTIFY`` would work too, but takes a lock on every notifying
  commit, serialising the commits of play, and a pooler in transaction mode cannot carry
  ``LISTEN``.)
- **Embedded** (no Redis: SQLite, the filesystem broker, ``make run``; every process on
  one machine): changes made in the web process itself are delivered at once; the
  process that committed sends the same message, with its keys, to the Unix socket of
  every other web process's hub (``games.live_embedded``), so that a Celery worker's
  moves (HTTP bots, built-in bots, forfeits on the clock) wake match and account streams
  alike, as Redis does, and nothing runs while nothing changes.

No lost wake-up: a waiter registers its keys *before* it reads the match, so a change
committed after that read publishes a message it receives; one committed before is in
what it reads. With Redis a subscription counts only once Redis has confirmed it, so a
waiter first awaits ``Waiter.ready`` (its keys confirmed), then reads; and whenever a
key's subscription is confirmed (the first time, or again after a reconnect) its waiters
are woken to read again, since a change may have gone by unheard before. The message
only says that something changed and where the match now stands (ply, status, seat to
move); the waiter reads what it shows from the database.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, connection
from django.urls import get_script_prefix, set_script_prefix

from cardserver.logs import current_match_id, set_match_id
from cardserver.serving import chain_signals, in_async_server, on_shutdown, reader_pool
from games import live_embedded
from games.events import MatchChanged, match_changed_subscribe, match_changed_unsubscribe
from games.live_redis import RedisSubscriptions
from games.live_timer import SharedTimer, wake

logger = logging.getLogger(__name__)

# Messages a waiter keeps unread; past that it only knows it must read the match again.
INBOX_SIZE = 64
_HOLDERS_MAX = 4096
# Seconds a new waiter waits for Redis to confirm its subscription before it reads anyway
# (woken again once it is confirmed); confirmations take a round trip when Redis is up.
SUBSCRIBE_WAIT = 2.0


def match_key(match_id: int) -> str:
    return f"m:{match_id}"


def account_key(user_id: int) -> str:
    return f"a:{user_id}"


def channel_prefix() -> str:
    """The Redis channel prefix: per database, since every Redis database shares channels."""
    return f"{settings.LIVE_CHANNEL_PREFIX}{connection.settings_dict['NAME']}:"


# --- Reads off the event loop -----------------------------------------------------------


async def run_sync(function: Callable[..., Any], *args: Any) -> Any:
    """Run ``function(*args)`` (database work) off the event loop.

    In the server, in the live reader threads: a fixed pool, not a thread per request;
    each thread keeps one database connection, checked as Django checks a request's
    (``CONN_MAX_AGE``, health checks) before each job.
    """
    # Run otherwise (Django's test client, a WSGI server), a stream's reads stay in
    # the request's own thread, with its connection and transaction, as Django does.
    if not in_async_server.get():
        return await sync_to_async(function)(*args)
    match_id, prefix = current_match_id(), get_script_prefix()

    def job() -> Any:
        # In the thread's own context, given the two values of the request's that its code
        # reads (the log lines' match id, the URLs' prefix); not in a copy of the
        # request's, as sync_to_async runs it: Django keeps its caches in asgiref Locals,
        # which live in a context variable, so each stream built its own cache client
        # and held it, with its Redis connection, for as long as it stayed open.
        set_match_id(match_id)
        set_script_prefix(prefix)
        close_old_connections()
        return function(*args)

    return await asyncio.get_running_loop().run_in_executor(reader_pool(), job)


# --- Waiters and the hub ----------------------------------------------------------------


class Waiter:
    """One stream's (or ``wait/``'s) registration: its keys, its unread messages, a wake.

    Slotted, and woken through one future made for each wait rather than an
    ``asyncio.Event`` and ``wait_for`` (a task of its own per wait): a process holds
    thousands of waiters, each asleep for seconds at a time, and every object they keep
    alive is one more that each full collection of the garbage collector walks.
    """

    __slots__ = ("hub", "keys", "inbox", "overflowed", "_woken")

    def __init__(self, hub: Hub, keys: Iterable[str]) -> None:
        self.hub = hub
        self.keys: set[str] = set()
        self.inbox: deque[dict] = deque()
        self.overflowed = False  # messages were dropped: read everything again
        self._woken: asyncio.Future | None = None
        for key in keys:
            self.add_key(key)

    def add_key(self, key: str) -> None:
        if key not in self.keys:
            self.keys.add(key)
            waiting = self.hub._waiters.get(key)
            if waiting is None:
                waiting = self.hub._waiters[key] = set()
                if self.hub.redis is not None:
                    self.hub.redis.watch(key)
            waiting.add(self)

    def remove_key(self, key: str) -> None:
        self.keys.discard(key)
        waiting = self.hub._waiters.get(key)
        if waiting is not None:
            waiting.discard(self)
            if not waiting:
                del self.hub._waiters[key]
                if self.hub.redis is not None:
                    self.hub.redis.unwatch(key)

    def push(self, message: dict | None) -> None:
        if message is None or len(self.inbox) >= INBOX_SIZE:
            self.overflowed = True
        else:
            self.inbox.append(message)
        wake(self._woken)

    def take(self) -> list[dict]:
        messages = list(self.inbox)
        self.inbox.clear()
        return messages

    async def ready(self, timeout: float = SUBSCRIBE_WAIT) -> None:
        """Wait (up to ``timeout``) until every key's subscription is confirmed: then read.

        Before the first read nothing heard is news (the read sees it), so wakes are
        dropped. If Redis does not confirm in time (it is away), the waiter goes on and
        reads; it is woken to read again when the confirmation comes.
        """
        loop = self.hub.loop
        deadline = loop.time() + timeout
        while True:
            self.inbox.clear()
            self.overflowed = False
            remaining = deadline - loop.time()
            if self.hub.closing or self.hub.confirmed(self.keys) or remaining <= 0:
                return
            await self.wait(remaining)

    async def wait(self, timeout: float, *, shared_timer: bool = False) -> bool:
        """Wait up to ``timeout`` seconds for a message; return whether one came.

        With ``shared_timer`` (a stream's keep-alive wait), the wait may last up to
        ``live_timer.KEEPALIVE_SLACK`` seconds longer: it costs no timer of its own, and
        the hub's ``SharedTimer`` ends the waits due together, in one turn of the loop.
        """
        if not (self.inbox or self.overflowed or self.hub.closing):
            woken = self._woken = self.hub.loop.create_future()
            if shared_timer:
                self.hub.timer.sleep(self, timeout, woken)
                timer = None
            else:
                timer = self.hub.loop.call_later(timeout, wake, woken)
            try:
                await woken
            finally:
                if timer is None:
                    self.hub.timer.unsleep(self, timeout)
                else:
                    timer.cancel()
                self._woken = None
        return bool(self.inbox or self.overflowed or self.hub.closing)

    def close(self) -> None:
        for key in list(self.keys):
            self.remove_key(key)


class Hub:
    """The waiters of one web process, and what wakes them from other processes: with
    Redis, its subscriptions' task (``games.live_redis``); without, its socket
    (``games.live_embedded``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._waiters: dict[str, set[Waiter]] = {}
        self.closing = False
        self.url = settings.LIVE_PUBSUB_URL
        self.redis = RedisSubscriptions(self, self.url, channel_prefix()) if self.url else None
        self._task = loop.create_task(self.redis.listen()) if self.redis else None
        self.inbox: live_embedded.Inbox | None = None
        if self.redis is None:
            folder = live_embedded.rendezvous(channel_prefix())
            try:
                self.inbox = live_embedded.Inbox(self, folder)
            except OSError as exc:
                logger.error(
                    "live: cannot listen in %s (%s): streams hear only this process's "
                    "changes", folder, exc,
                )  # fmt: skip
        self.timer = SharedTimer(loop)

    # Delivery, in the loop.

    def waiter(self, keys: Iterable[str]) -> Waiter:
        return Waiter(self, keys)

    def deliver(self, key: str, message: dict | None) -> None:
        for waiter in list(self._waiters.get(key, ())):
            waiter.push(message)

    def wake_all(self) -> None:
        """Wake everyone to read again (a message may have been lost, or we stop)."""
        for waiting in list(self._waiters.values()):
            for waiter in list(waiting):
                waiter.push(None)

    def shutdown(self) -> None:
        """Tell every stream to end with its reconnect event (graceful shutdown)."""
        self.closing = True
        self.wake_all()
        if self.inbox is not None:
            self.inbox.close()

    def close(self) -> None:
        """Stop hearing other processes (the hub's loop ended, or a test is done with it)."""
        if self._task is not None and not self.loop.is_closed():
            self._task.cancel()
        if self.inbox is not None:
            self.inbox.close()

    # Subscriptions (Redis: games.live_redis), in the loop.

    def confirmed(self, keys: Iterable[str]) -> bool:
        """Whether a change published now on any of ``keys`` reaches this process."""
        return self.redis is None or self.redis.confirmed(keys)

    @property
    def messages(self) -> int:
        """Messages this process was sent by Redis (none without it)."""
        return 0 if self.redis is None else self.redis.messages


def _message(match_id: int, change: str, ply: int, status: str, to_move: int | None) -> dict:
    return {"match": match_id, "change": change, "ply": ply, "status": status, "to_move": to_move}


# --- The hub of this process ------------------------------------------------------------

_hub: Hub | None = None


def hub() -> Hub:
    """Return this process's hub, started in the running event loop on first use."""
    global _hub
    loop = asyncio.get_running_loop()
    if _hub is None or _hub.loop is not loop or _hub.loop.is_closed():
        if _hub is not None:
            _hub.close()
        _hub = Hub(loop)
        on_shutdown(shutdown_current)
        chain_signals(loop)
    return _hub


def shutdown_current() -> None:
    """End this process's streams with their reconnect event (the server is stopping)."""
    if _hub is not None:
        _hub.shutdown()


# --- Publishing, in the process that committed ------------------------------------------

_holders: OrderedDict[int, list[int]] = OrderedDict()
_holders_lock = threading.Lock()
_redis = None


def match_accounts(match_id: int) -> list[int]:
    """Return the ids of the accounts holding a seat (directly or as a client bot's owner)."""
    from games.models import Match, Seat

    with _holders_lock:
        known = _holders.get(match_id)
    if known is not None:
        return known
    rows = Seat.objects.filter(match_id=match_id).values_list("user_id", "bot__account_id")
    accounts = sorted({user or owner for user, owner in rows if user or owner})
    status = Match.objects.filter(pk=match_id).values_list("status", flat=True).first()
    if status is not None and status != Match.Status.WAITING:  # seats never change again
        with _holders_lock:
            _holders[match_id] = accounts
            while len(_holders) > _HOLDERS_MAX:
                _holders.popitem(last=False)
    return accounts


def forget_holders() -> None:
    with _holders_lock:
        _holders.clear()


# The Redis messages of the changes committed inside ``publish_batched``, this thread's.
_batch = threading.local()


@contextmanager
def publish_batched() -> Iterator[None]:
    """Send the Redis messages of the changes announced inside (by this thread) in one
    pipeline when it ends, instead of a round trip each: the I/O pool commits several
    answers' moves at once (``bots.pool``). Nested, the outermost sends."""
    if getattr(_batch, "messages", None) is not None:
        yield
        return
    _batch.messages = []
    try:
        yield
    finally:
        messages, _batch.messages = _batch.messages, None
        if messages:
            _redis_send(messages)


def _publish(event: MatchChanged) -> None:
    """``MatchChanged`` handler: one message to the match's key and to each holder's."""
    message = _message(event.match_id, str(event.change), event.ply, event.status, event.to_move)
    keys = [match_key(event.match_id)] + [
        account_key(user_id) for user_id in match_accounts(event.match_id)
    ]
    publish_keys(keys, message, match_id=event.match_id)


def publish_keys(keys: list[str], message: dict, *, match_id: int | None = None) -> None:
    """Send ``message`` to the waiters of ``keys`` in every web process; call it after the
    commit that the message announces (``games.account_notices`` does so for notices).
    Inside ``publish_batched``, the Redis message waits for the batch's one round trip."""
    if settings.LIVE_PUBSUB_URL:
        sent = (match_id, keys, orjson.dumps(message))
        batched = getattr(_batch, "messages", None)
        if batched is not None:
            batched.append(sent)
        else:
            _redis_send([sent])
        return
    current, own = _hub, None
    if current is not None and not current.loop.is_closed():
        for key in keys:
            current.loop.call_soon_threadsafe(current.deliver, key, message)
        if current.inbox is not None:
            own = str(current.inbox.path)
    live_embedded.publish(live_embedded.rendezvous(channel_prefix()), keys, message, own=own)


def _redis_send(messages: list[tuple[int | None, list[str], bytes]]) -> None:
    """PUBLISH each (match, keys, payload) on its keys' channels, in one round trip."""
    global _redis
    if _redis is None:
        import redis

        url = settings.LIVE_PUBSUB_URL
        _redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    prefix = channel_prefix()
    try:
        with _redis.pipeline(transaction=False) as pipe:
            for _match_id, keys, payload in messages:
                for key in keys:
                    pipe.publish(prefix + key, payload)
            pipe.execute()
    except Exception as exc:
        # Waiters still wake at their keep-alive and read the match again.
        matches = ", ".join(str(match_id) for match_id, _keys, _payload in messages)
        logger.warning(
            "live: could not publish match %s (%s)", matches, exc,
            extra={"match_id": messages[0][0]},
        )  # fmt: skip


def live_publish_connect() -> None:
    """Hang the publisher on the announcement (``GamesConfig.ready``)."""
    match_changed_subscribe(_publish)


def live_publish_disconnect() -> None:
    """Stop publishing (tests: a change then reaches no waiter unless it reads again)."""
    match_changed_unsubscribe(_publish)
