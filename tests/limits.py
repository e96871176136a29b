"""The API's rate-limit counters, set back to zero between tests."""

from __future__ import annotations


def rate_limits_reset() -> None:
    """Forget every request counted against the API's rate limits (cardserver/throttling.py).

    A Redis cache loses only the counters' keys, since its database may be the broker's;
    the database cache needs database access (a test's ``db``).
    """
    from django.conf import settings
    from django.core.cache import caches

    cache = caches[settings.API_THROTTLE_CACHE]
    if type(cache).__name__ == "RedisCache":
        client = cache._cache.get_client(write=True)
        keys = list(client.scan_iter(match=cache.make_key("throttle:*")))
        if keys:
            client.delete(*keys)
    else:
        cache.clear()
