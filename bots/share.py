"""Each owner's share of the I/O pool: how many of an owner's calls are queued or in flight.

With Redis (``BOTS_CALLS_SHARE_URL``, by default the cache's Redis) an owner's calls are
the members of one sorted set (a match has one call at a time: the member names the match
and the driver's claim), each scored by when it lapses. A Lua script drops the lapsed
ones, then admits a call when it is in the set already or the set holds fewer than the
cap: one round trip, O(log n), and no lock in the database. (Counted in the database,
every dispatch takes the owner's row ``FOR UPDATE`` and counts the owner's claims under it
until its commit, so all the dispatches of an owner with many bots queue behind each
other: in the benchmark's 1,000 matches, 40% of the recording threads' time.)

A call's entry is given back when its answer is played (``release``), renewed by the pool's
heartbeat while the call waits for its bot (``renew``, which also writes back an entry that
Redis lost), and lapses on its own when the process that made it died: its share is free
again within the claim's own time (``bots.leases.CALL_HELD``), as the match is.

Without Redis (the embedded default), or when Redis does not answer, ``bots.calls`` counts
the owner's claims in the database under the owner's row lock, as before.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings

logger = logging.getLogger(__name__)

# KEYS[1]: the owner's set. ARGV: the call, seconds its entry lasts, the cap.
_ADMIT = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
  return 1
end
return 0
"""

# KEYS: owners' sets; ARGV[1]: seconds the entries last, then one call per key.
_RENEW = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
local held = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + held, ARGV[i + 1])
  redis.call('EXPIRE', key, math.ceil(held) + 1)
end
return #KEYS
"""


class OwnerShares:
    """The owners' calls at once, counted in Redis; thread-safe."""

    def __init__(self, url: str, namespace: str) -> None:
        import redis

        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._prefix = f"arena:bot-calls:{namespace}:"
        self._admit = self._client.register_script(_ADMIT)
        self._renew = self._client.register_script(_RENEW)

    def _key(self, owner_id: int) -> str:
        return f"{self._prefix}{owner_id}"

    def admit(self, *, owner_id: int, call: str, hold: float, cap: int) -> bool:
        """Count the call against its owner for ``hold`` seconds, if the owner has fewer
        than ``cap`` calls (a call counted already stays counted, for ``hold`` more)."""
        return bool(self._admit(keys=[self._key(owner_id)], args=[call, hold, cap]))

    def release(self, *, owner_id: int, call: str) -> None:
        """Give the call back to its owner's share."""
        self._client.zrem(self._key(owner_id), call)

    def renew(self, calls: list[tuple[int, str]], *, hold: float) -> None:
        """Make each (owner, call) count for ``hold`` seconds from now."""
        if calls:
            self._renew(
                keys=[self._key(owner) for owner, _ in calls],
                args=[hold, *(call for _, call in calls)],
            )

    def count(self, owner_id: int) -> int:
        """The owner's calls counted now, lapsed ones included until the next admission."""
        return self._client.zcard(self._key(owner_id))


_SHARES: dict[tuple[str, str], OwnerShares] = {}
_SHARES_LOCK = threading.Lock()


def owner_shares() -> OwnerShares | None:
    """Return the shares kept in Redis, or None when the database keeps them."""
    url = settings.BOTS_CALLS_SHARE_URL
    if not url:
        return None
    # Two arenas (or a test database beside a dev one) on one Redis never count each
    # other's calls.
    namespace = str(settings.DATABASES["default"]["NAME"])
    with _SHARES_LOCK:
        shares = _SHARES.get((url, namespace))
        if shares is None:
            shares = _SHARES[(url, namespace)] = OwnerShares(url, namespace)
        return shares
