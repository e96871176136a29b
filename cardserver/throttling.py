"""API rate limits: per client IP for anonymous requests, per user for signed-in ones.

Every request under ``/api/`` counts against one general scope, and some also against a
stricter one:

=============  ==========================================  ==============  ============
scope          requests                                    counted per     default
=============  ==========================================  ==============  ============
``anon``       any request without a valid token/session   client IP       1200/minute
``user``       any other signed-in request                 user            1200/minute
``play``       ``GET .../me/``, ``GET .../wait/``,          user            6000/minute
               ``POST .../moves/`` (instead of ``user``)
``create``     ``POST /matches/``, ``POST .../join/``,      user            60/minute
               ``POST /tournaments/``
``register``   ``POST /bots/``, ``POST .../rotate/``        user            20/hour
``login``      ``POST /accounts/signup/``,                  client IP       20/minute
               ``POST /accounts/token/``
``challenge``  ``POST /challenges/``                        user            30/hour
=============  ==========================================  ==============  ============

The rates are ``API_THROTTLE_RATES`` (environment variables ``THROTTLE_<SCOPE>``, e.g.
``THROTTLE_PLAY=100/second``; an empty rate turns a scope off). A request over a rate is
answered 429 with ``Retry-After`` (seconds) and the error body, ``code`` ``throttled`` and
``detail.retry_after``.

Counting is a fixed window per scope and client: one counter per window, incremented
atomically in the cache ``API_THROTTLE_CACHE``, which every web process shares: Redis
(``CACHE_URL``, or else the broker's Redis) or else a table of the database
(cardserver/cache.py), so that a limit means what it says however many processes
serve. DRF's own throttles keep a list of every request's time, which costs a
6000-entry list per request at the ``play`` rate; a counter costs one increment. A client
can send up to twice a rate across the boundary of two windows.

The client IP is ``REMOTE_ADDR``, whatever a client writes in ``X-Forwarded-For``; with
``API_NUM_PROXIES`` set (the number of proxies in front of the server), the address the
nearest of them put in ``X-Forwarded-For`` (DRF's ``NUM_PROXIES``).
"""

from __future__ import annotations

import time
from weakref import WeakKeyDictionary

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

# (HTTP method, URL name) -> the strict scope of the request, besides its general one.
STRICT_SCOPES = {
    ("POST", "match-list"): "create",
    ("POST", "match-join"): "create",
    ("POST", "tournament-list"): "create",
    ("POST", "bot-list"): "register",
    ("POST", "bot-rotate"): "register",
    ("POST", "account-signup"): "login",
    ("POST", "account-token"): "login",
    ("POST", "challenge-list"): "challenge",
}
# Requests a playing client makes on every turn: counted in ``play``, not in ``user``.
PLAY_URLS = {"match-me", "match-wait", "match-moves"}


def parse_rate(rate: str) -> tuple[int, int]:
    """Return (requests, seconds) of a rate such as ``"60/minute"`` or ``"5/s"``."""
    count, _, period = rate.partition("/")
    if not count.strip().isdigit() or period.strip()[:1] not in PERIODS:
        raise ValueError(f"{rate!r} is not a rate like 60/minute")
    return int(count), PERIODS[period.strip()[0]]


class ArenaThrottle(BaseThrottle):
    """Count the request against its scopes; refuse it when any of them is over its rate."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view) -> bool:
        user = getattr(request, "user", None)
        signed_in = bool(user and user.is_authenticated)
        match = getattr(request._request, "resolver_match", None)
        url_name = match.url_name if match is not None else ""
        scopes = []
        if not signed_in:
            scopes.append(("anon", self.get_ident(request)))
        elif url_name in PLAY_URLS:
            scopes.append(("play", user.pk))
        else:
            scopes.append(("user", user.pk))
        strict = STRICT_SCOPES.get((request.method, url_name))
        if strict:
            scopes.append((strict, self.get_ident(request) if strict == "login" else user.pk))
        now = time.time()
        for scope, ident in scopes:
            wait = _count(scope, ident, now)
            if wait is not None:
                self._wait = max(self._wait or 0.0, wait)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


def _count(scope: str, ident, now: float) -> float | None:
    """Count one request of ``ident`` in ``scope``; return the seconds to wait if over."""
    rate = settings.API_THROTTLE_RATES.get(scope)
    if not rate:
        return None
    limit, period = parse_rate(rate)
    window = int(now // period)
    key = f"throttle:{scope}:{ident}:{window}"
    cache = caches[settings.API_THROTTLE_CACHE]
    if isinstance(cache, RedisCache):
        count = _redis_count(cache, key, period + 1)
        return (window + 1) * period - now if count > limit else None
    # incr() is atomic in Redis and in memory, and raises ValueError when the counter does
    # not exist yet: the first request of a window creates it (add() does nothing if
    # another request created it meanwhile, and that one's counter is incremented then).
    # Every other request of the window costs the one incr().
    try:
        count = cache.incr(key)
    except ValueError:
        if cache.add(key, 1, timeout=period + 1):
            count = 1
        else:
            try:
                count = cache.incr(key)
            except ValueError:
                # Created and expired again in between: count this request alone.
                cache.set(key, 1, timeout=period + 1)
                count = 1
    if count > limit:
        return (window + 1) * period - now
    return None


# Created with its expiry if missing, then incremented: atomic, as a script is in Redis, so
# a counter never lives on without its expiry.
_COUNT_SCRIPT = (
    "local count = redis.call('INCR', KEYS[1]) "
    "if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end "
    "return count"
)
# One client per cache backend (each thread's): Django's ``get_client()`` builds a new
# ``redis.Redis`` on every call, some 150 µs of CPU, more than the round trip itself.
_clients: WeakKeyDictionary = WeakKeyDictionary()


def _redis_count(cache: RedisCache, key: str, timeout: int) -> int:
    """Count one request in Redis in one round trip; return the window's count.

    Django's ``RedisCache.incr`` asks EXISTS and then INCRBY (two round trips, the largest
    cost of an API request after its view). Here one command, a short script that Redis
    keeps compiled, counts and gives a new counter its expiry; a MULTI/EXEC doing the same
    costs the client twice its CPU (four commands to write and four answers to read).
    """
    redis_key = cache.make_and_validate_key(key)
    backend = cache._cache
    client = _clients.get(backend)
    if client is None:
        client = _clients[backend] = backend.get_client(redis_key, write=True)
    return int(client.eval(_COUNT_SCRIPT, 1, redis_key, timeout))
