"""Caps on open streams: per account and per client IP, across every web process.

A stream is counted when it is opened (a ``Lease``) and given back when it ends, however
it ends: the lease is released by the stream's ``finally``, or when the lease itself is
collected for a response that was never iterated. A stream no cap applies to (both caps
set to 0, or an anonymous stream with the IP cap at 0) is not counted at all: it costs no
lock, no Redis round trip and no thread (``capped``).

Without Redis (the embedded default) each web process counts its own streams, so the
caps hold per process. With Redis (``LIVE_PUBSUB_URL``) they hold across the processes
sharing it: every process keeps, in one Redis hash per account and per IP address, a
field of its own with the number of streams it holds there, and a Lua script admits a
stream when the fields of the processes still alive add up to less than the cap. A
process is alive while its heartbeat (every third of ``LIVE_CAPS_TTL``) renews its entry
in a sorted set of processes; a killed one stops renewing it, and its streams stop
counting within ``LIVE_CAPS_TTL`` seconds. Each heartbeat also writes the process's own
counts again (a count that has dropped to 0 as a deleted field), so a Redis that lost
them (restarted, flushed) or missed a release is right again within one beat. Redis I/O
never runs in the event loop: a stream is admitted in a reader thread
(``games.live.run_sync``), and releases go to the caps thread, which also beats.
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import socket
import threading
import time
from collections import Counter

from django.conf import settings
from django.http import HttpResponse

from cardserver.api_errors import error_body
from games.view_helpers import json_answer

logger = logging.getLogger(__name__)

RETRY_AFTER = 5

_open_by_account: Counter = Counter()
_open_by_ip: Counter = Counter()
# Reentrant: a Lease collected (``__del__``) while this thread holds the lock takes it again.
_caps_lock = threading.RLock()


class Lease:
    """One open stream counted against its account's and its IP's caps, until released."""

    def __init__(self, account: int | None, ip: str, shared: SharedCaps | None) -> None:
        self.account, self.ip, self.shared, self.released = account, ip, shared, False

    def release(self) -> None:
        # Released once: by the stream's ``finally``, or by ``__del__`` when nothing else
        # holds the lease (never both at once). Shared, the caps thread gives it back.
        if self.released:
            return
        self.released = True
        if self.shared is not None:
            self.shared.release_later(self.account, self.ip)
            return
        with _caps_lock:
            _count(self.account, self.ip, -1)

    def __del__(self) -> None:  # a response never iterated still gives its place back
        self.release()


def _count(account: int | None, ip: str, step: int) -> None:
    """Add ``step`` to this process's counts (the caller holds ``_caps_lock``)."""
    for counter, key in ((_open_by_account, account), (_open_by_ip, ip)):
        if key is None:
            continue
        counter[key] += step
        if counter[key] <= 0:
            del counter[key]


class Uncounted:
    """The lease of a stream no cap applies to: nothing counted, nothing to give back."""

    __slots__ = ()

    def release(self) -> None:
        pass


UNCOUNTED = Uncounted()


def _caps_of(plan) -> tuple[int | None, dict[str, int]]:
    account = plan.user.pk if getattr(plan.user, "is_authenticated", False) else None
    caps = {"account": settings.LIVE_MAX_STREAMS_PER_ACCOUNT if account is not None else 0,
            "IP address": settings.LIVE_MAX_STREAMS_PER_IP}  # fmt: skip
    return account, caps


def capped(plan) -> bool:
    """Whether a cap applies to the stream ``plan`` opens (if not, ``stream_lease`` is free)."""
    return any(_caps_of(plan)[1].values())


def stream_lease(plan) -> Lease | Uncounted | HttpResponse:
    """Count a new stream, or answer 429 if its account or IP holds its cap already.

    Runs off the event loop when ``capped(plan)``: with Redis it asks Redis.
    """
    account, caps = _caps_of(plan)
    if not any(caps.values()):
        # Counting streams no cap limits would only cost: a Redis round trip per opening
        # and a hash per account to rewrite at every heartbeat.
        return UNCOUNTED
    shared = shared_caps()
    if shared is not None:
        try:
            over = shared.acquire(account, plan.ip, caps)
        except Exception as exc:  # Redis is down: this process's own counts decide
            logger.warning("live: stream caps counted in this process only (%s)", exc)
        else:
            return over or Lease(account, plan.ip, shared)
    with _caps_lock:
        over = None
        if caps["account"] and _open_by_account[account] >= caps["account"]:
            over = too_many_streams("account", caps["account"])
        elif caps["IP address"] and _open_by_ip[plan.ip] >= caps["IP address"]:
            over = too_many_streams("IP address", caps["IP address"])
        if over is not None:
            return over
        _count(account, plan.ip, 1)
        return Lease(account, plan.ip, None)


def too_many_streams(per: str, limit: int) -> HttpResponse:
    response = json_answer(
        error_body(
            code="too_many_streams",
            message=f"This {per} holds {limit} open streams already; close one first.",
            detail={"limit": limit, "per": per, "retry_after": RETRY_AFTER},
        ),
        status=429,
    )
    response["Retry-After"] = str(RETRY_AFTER)
    return response


# --- Across processes, in Redis -----------------------------------------------------------

# KEYS: the processes' sorted set, then the hashes to count in; ARGV: this process, the
# hashes' caps (0: not capped, counted only), the sorted set's and the hashes' lifetime.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local me = ARGV[1]
for i = 2, #KEYS do
  local cap = tonumber(ARGV[i])
  if cap > 0 then
    local fields = redis.call('HGETALL', KEYS[i])
    local total = 0
    for j = 1, #fields, 2 do
      local expires = redis.call('ZSCORE', KEYS[1], fields[j])
      if fields[j] == me or (expires and tonumber(expires) > now) then
        total = total + tonumber(fields[j + 1])
      else
        redis.call('HDEL', KEYS[i], fields[j])
      end
    end
    if total >= cap then return i - 1 end
  end
end
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], me, 1)
  redis.call('EXPIRE', KEYS[i], ARGV[#KEYS + 1])
end
return 0
"""
_RELEASE = """
for i = 1, #KEYS do
  if redis.call('HINCRBY', KEYS[i], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[i], ARGV[1]) end
end
"""
# KEYS: the processes' sorted set, then this process's hashes; ARGV: this process, its
# lifetime, the hashes' lifetime, then its count in each hash.
_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('EXPIRE', KEYS[1], ARGV[3])
for i = 2, #KEYS do
  if tonumber(ARGV[i + 2]) > 0 then
    redis.call('HSET', KEYS[i], ARGV[1], ARGV[i + 2])
    redis.call('EXPIRE', KEYS[i], ARGV[3])
  else
    redis.call('HDEL', KEYS[i], ARGV[1])
  end
end
"""
_BEAT_KEYS = 500  # hashes renewed per script call, so that no call holds Redis long


class SharedCaps:
    """This process's side of the caps kept in Redis: admits, releases, beats."""

    def __init__(self, url: str) -> None:
        import redis

        from games.live import channel_prefix

        self.url, self.pid = url, os.getpid()
        self.me = f"{socket.gethostname()}:{self.pid}:{secrets.token_hex(4)}"
        self.prefix = f"{channel_prefix()}caps:"
        self.ttl = settings.LIVE_CAPS_TTL
        self.redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._release = self.redis.register_script(_RELEASE)
        self._beat = self.redis.register_script(_BEAT)
        self._releases: queue.SimpleQueue = queue.SimpleQueue()
        # The hashes this process may hold a field in (written by the last beat or by an
        # admission since): a count that has dropped to 0 is deleted at the next beat.
        self._fields: set[str] = set()
        self._held = 0  # leases admitted here and not yet given back
        self.replaced = False  # set when another object takes over this process's caps
        self.beat()  # alive before anything is counted
        self._thread = threading.Thread(target=self._run, name="stream-caps", daemon=True)
        self._thread.start()

    def _keys(self, account: int | None, ip: str) -> list[str]:
        keys = [] if account is None else [f"{self.prefix}account:{account}"]
        return [*keys, f"{self.prefix}ip:{ip}"]

    def acquire(self, account: int | None, ip: str, caps: dict) -> HttpResponse | None:
        """Count a stream in Redis; return the 429 answer if a cap is reached."""
        limits = ([caps["account"]] if account is not None else []) + [caps["IP address"]]
        with _caps_lock:  # a beat writes this process's counts: not between two changes
            self._fields.update(self._keys(account, ip))  # counted even if no answer comes
            over = self._acquire(
                keys=[f"{self.prefix}alive", *self._keys(account, ip)],
                args=[self.me, *limits, int(3 * self.ttl)],
            )
            if not over:
                _count(account, ip, 1)
                self._held += 1
                return None
        per = "IP address" if account is None or over == 2 else "account"
        return too_many_streams(per, caps[per])

    def release_later(self, account: int | None, ip: str) -> None:
        self._releases.put((account, ip))

    def _release_now(self, account: int | None, ip: str) -> None:
        with _caps_lock:
            _count(account, ip, -1)
            self._held -= 1
            try:
                self._release(keys=self._keys(account, ip), args=[self.me])
            except Exception as exc:  # the next beat writes the count Redis missed
                logger.warning("live: a stream's cap release waits for the heartbeat (%s)", exc)

    def beat(self) -> None:
        """Say this process is alive, and write its counts again.

        A count that went to 0 since the last beat is written as 0 (its field deleted):
        a release Redis missed, or an admission it counted although its answer never
        came back, would otherwise hold a place under the cap for as long as this
        process lives.
        """
        with _caps_lock:
            counts = [(f"{self.prefix}account:{key}", n) for key, n in _open_by_account.items()]
            counts += [(f"{self.prefix}ip:{key}", n) for key, n in _open_by_ip.items()]
            written = {key for key, _ in counts}
            counts += [(key, 0) for key in self._fields - written]
            self._fields = written
            for start in range(0, max(len(counts), 1), _BEAT_KEYS):
                part = counts[start : start + _BEAT_KEYS]
                self._beat(
                    keys=[f"{self.prefix}alive", *(key for key, _ in part)],
                    args=[self.me, self.ttl, int(3 * self.ttl), *(n for _, n in part)],
                )

    def _run(self) -> None:
        interval = self.ttl / 3
        next_beat = time.monotonic() + interval
        while True:
            if self.replaced and not self._held:
                # Replaced (the URL changed) and nothing left to give back: stop, and let
                # this process's old entry lapse rather than beat the counts twice.
                return
            try:
                item = self._releases.get(timeout=max(0.0, next_beat - time.monotonic()))
            except queue.Empty:
                item = None
            if item is not None:
                self._release_now(*item)
            if time.monotonic() >= next_beat:
                next_beat = time.monotonic() + interval
                if self.replaced:
                    continue
                try:
                    self.beat()
                except Exception as exc:
                    logger.warning("live: stream caps heartbeat failed (%s)", exc)


_shared: SharedCaps | None = None
_shared_lock = threading.Lock()


def shared_caps() -> SharedCaps | None:
    """Return this process's Redis caps, or None without Redis (counted per process)."""
    global _shared
    url = settings.LIVE_PUBSUB_URL
    if not url:
        return None
    with _shared_lock:
        if _shared is None or _shared.url != url or _shared.pid != os.getpid():
            try:
                new = SharedCaps(url)
            except Exception as exc:
                logger.warning("live: stream caps counted in this process only (%s)", exc)
                return None
            if _shared is not None:
                _shared.replaced = True
            _shared = new
        return _shared
