"""Bots: which URLs they may have, their time, health, and the I/O pool of their calls."""

from cardserver.settings.base import CACHE_URL, DEBUG
from cardserver.settings.env import env
from cardserver.settings.queues import CELERY_TASK_DEFAULT_QUEUE

# Whether bot URLs may lead to loopback, private, link-local or multicast addresses: on in
# development and tests (bots on localhost), off in production, where a bot URL pointing
# into the arena's own network would let anyone reach its database or cloud metadata.
BOTS_ALLOW_PRIVATE_URLS = (
    DEBUG if env.BOTS_ALLOW_PRIVATE_URLS is None else env.BOTS_ALLOW_PRIVATE_URLS
)
# Seconds an HTTP bot has for a move when its match, tournament or ladder sets none.
BOTS_DEFAULT_MOVE_TIME_LIMIT = 5.0
# Fernet keys that encrypt bot secrets at rest (cardserver.crypto), newest first: the first
# encrypts, all decrypt. Unset, one key derived from SECRET_KEY (docs/credentials.md).
BOT_SECRET_KEYS = env.BOT_SECRET_KEYS
# Failed pings or forfeits in a row after which a bot is marked unhealthy.
BOTS_UNHEALTHY_AFTER = 3
# Built-in players' moves in a row that the bot driver appends in one transaction: a
# decision costs microseconds, a write a millisecond or more; short enough that a match
# in progress keeps a log to resume from and spectators see it move.
BOTS_BUILTIN_MOVES_PER_WRITE = env.BOTS_BUILTIN_MOVES_PER_WRITE
# The I/O pool: the Celery queue of HTTP bots' calls, read by the `bot-calls` worker
# (docker/compose.yaml), whose task hands each call to its process's asyncio event loop,
# so that a bot that thinks holds a coroutine, never a thread or one of the CPU workers'
# processes (bots.pool.CallPool). Empty: each call is made by the worker that plays the
# turn (the behaviour before the pool). A test or benchmark with a default queue of its
# own gets a call queue of its own with it.
BOTS_CALL_QUEUE = env.BOTS_CALL_QUEUE or (
    "bot-calls"
    if CELERY_TASK_DEFAULT_QUEUE == "celery"
    else f"{CELERY_TASK_DEFAULT_QUEUE}-bot-calls"
)
if BOTS_CALL_QUEUE == "-":
    BOTS_CALL_QUEUE = ""
# Calls of one owner's bots that may be queued or in flight at once; more wait (as the
# arena's delay, never the bot's) until one ends, so that one owner's many slow bots
# cannot take the whole pool.
BOTS_CALLS_PER_OWNER = env.BOTS_CALLS_PER_OWNER
# Where those calls are counted: a Redis URL (by default the cache's Redis), one sorted set
# per owner (bots/share.py); "off", or no Redis, counts them in the database under the
# owner's row lock, which makes one owner's dispatches wait for each other.
_share_url = env.BOTS_CALLS_SHARE_URL or (
    CACHE_URL if CACHE_URL.startswith(("redis://", "rediss://", "unix://")) else ""
)
BOTS_CALLS_SHARE_URL = "" if _share_url.lower() == "off" else _share_url
# Seconds a queued call may wait for the pool; one not sent by then is queued anew (the
# match's claim covers this wait, the bot's time and a grace).
BOTS_CALL_SEND_WITHIN = env.BOTS_CALL_SEND_WITHIN
# Threads of each bot-calls process that record answers (a database connection each) and
# send the match's next call to the loop; the calls themselves wait on the loop.
BOTS_CALL_RECORDERS = env.BOTS_CALL_RECORDERS
# Answers a recording thread takes at once, when that many are ready, and records in one
# transaction (each on its own again if that transaction fails: bots/pool.py).
BOTS_CALL_ANSWERS_PER_COMMIT = env.BOTS_CALL_ANSWERS_PER_COMMIT
# Claims of one turn that may lapse in a row (each a worker that died holding it) before
# the match is aborted with what failed as its reason (bots.leases.lease_claim).
BOTS_TURN_MAX_LAPSES = env.BOTS_TURN_MAX_LAPSES
# Challenges (bots.challenges) one user may have waiting for an answer at once; the rate
# of new ones is the API's ``challenge`` scope (THROTTLE_CHALLENGE).
CHALLENGES_MAX_PENDING = env.CHALLENGES_MAX_PENDING
# Seconds a challenge waits for an answer before it expires (bots.challenges: beat's sweep
# every 30 s, and any answer that comes too late).
CHALLENGES_EXPIRE_AFTER = env.CHALLENGES_EXPIRE_AFTER
