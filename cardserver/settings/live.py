"""Live streams and waits (games/live.py, games/streams.py)."""

from cardserver.settings.base import CACHE_URL
from cardserver.settings.env import env
from cardserver.settings.queues import CELERY_BROKER_URL

# Where a change of a match is published so that every web process wakes its waiters:
# a Redis URL (pub/sub), by default CACHE_URL's or the broker's Redis; "off" (or no Redis
# at all) is the embedded hub: every process on one machine, changes sent to each web
# process's Unix socket (games/live_embedded.py).
_live_url = env.LIVE_PUBSUB_URL or ""
if not _live_url:
    _live_url = next(
        (
            url
            for url in (CACHE_URL, CELERY_BROKER_URL)
            if url.startswith(("redis://", "rediss://", "unix://"))
        ),
        "",
    )
LIVE_PUBSUB_URL = "" if _live_url.lower() == "off" else _live_url
# Channels are named <prefix><database name>:<key>: Redis shares channels across its
# numbered databases, so two arenas on one Redis must not hear each other.
LIVE_CHANNEL_PREFIX = "arena:live:"
# Seconds a web process stays subscribed to a key (a match's or an account's channel)
# after its last waiter there left: a stream reconnecting or a wait/ asked again finds
# the subscription still there instead of making it again.
LIVE_UNSUBSCRIBE_AFTER = env.LIVE_UNSUBSCRIBE_AFTER
# Threads (each with its database connection) reading matches for streams and waits.
LIVE_READ_THREADS = env.LIVE_READ_THREADS
# Seconds between two keep-alive comments of an idle stream (proxies close silent ones).
LIVE_KEEPALIVE = env.LIVE_KEEPALIVE
# Open streams allowed per account and per client IP (0: no cap): across every web
# process with Redis (LIVE_PUBSUB_URL), in each web process without it (games/stream_caps.py).
LIVE_MAX_STREAMS_PER_ACCOUNT = env.LIVE_MAX_STREAMS_PER_ACCOUNT
LIVE_MAX_STREAMS_PER_IP = env.LIVE_MAX_STREAMS_PER_IP
# Seconds the streams of a web process that died without closing them (killed) still
# count against the caps in Redis; each process renews its own every third of it.
LIVE_CAPS_TTL = env.LIVE_CAPS_TTL
# A stream whose client has not taken an event within this many seconds is cut off
# (its socket buffer is full): a slow reader is never buffered without bound.
LIVE_SEND_TIMEOUT = env.LIVE_SEND_TIMEOUT
