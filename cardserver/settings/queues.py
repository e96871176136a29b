"""Celery: broker, task queues and acknowledgement, beat, and the health check's waits.

Named ``queues``, not ``celery``, so that no import of this package can find it in the
place of the Celery library.
"""

from cardserver.settings.base import VAR_DIR
from cardserver.settings.env import env

CELERY_BROKER_URL = env.CELERY_BROKER_URL
if CELERY_BROKER_URL.startswith("filesystem://"):
    # The embedded broker: messages are files, so development needs no broker server.
    # kombu's filesystem transport, writing and claiming each file atomically and dropping
    # an unreadable one instead of stopping the worker (cardserver/broker.py).
    CELERY_BROKER_TRANSPORT = "cardserver.broker:Transport"
    # Producer and consumer share one configuration, so messages are written to and read
    # from the same folder. Fanout (worker remote control) keeps its tables in `control`.
    _celery_dir = VAR_DIR / "celery"
    _queue_dir = _celery_dir / "queue"
    _control_dir = _celery_dir / "control"
    for _folder in (_queue_dir, _control_dir):
        _folder.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "control_folder": str(_control_dir),
        # Seconds an idle consumer waits before it lists the folder again. Each hop of a
        # turn (a bot call, the built-in move after it) waits for the next look: 0.02 s
        # makes a ply about 4x quicker than 0.25 s for about 1% of a core more while idle
        # (python -m benchmarks.embedded).
        "polling_interval": env.EMBEDDED_BROKER_POLL,
    }

# The longest a match-playing task may run: a soft limit, and the hard one a minute later
# (tournaments/tasks.py). A match of built-in players takes well under a minute; HTTP bots
# are bounded by their time limit per move. The hard limit only stops a runaway.
MATCH_TASK_TIME_LIMIT = 3600
# Redis puts back in its queue a message that a worker took and has not acknowledged for
# longer than the visibility timeout. Every worker renews the messages it holds (running,
# or waiting for their ETA) every REDIS_HELD_RENEW_EVERY seconds and puts back the lapsed
# ones as often (cardserver/broker_held.py): so a long task is never given to a second
# worker, and the tasks of a worker killed outright go back to the queue within the
# timeout and one renewal (45 + 5 s), as a dead driver's claim lapses (bots.driver).
REDIS_VISIBILITY_TIMEOUT = env.REDIS_VISIBILITY_TIMEOUT
REDIS_HELD_RENEW_EVERY = REDIS_VISIBILITY_TIMEOUT / 9
if CELERY_BROKER_URL.startswith(("redis://", "rediss://", "redis+socket://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": REDIS_VISIBILITY_TIMEOUT}

CELERY_RESULT_BACKEND = env.CELERY_RESULT_BACKEND
CELERY_TASK_ALWAYS_EAGER = env.CELERY_TASK_ALWAYS_EAGER
# The queue tasks go to and workers read. Tests and benchmarks that start workers on a
# shared broker use one of their own, so that no other worker takes their tasks.
CELERY_TASK_DEFAULT_QUEUE = env.CELERY_TASK_DEFAULT_QUEUE
CELERY_TASK_EAGER_PROPAGATES = True
# Interactive play's queue: the turns of the arena's bots in a match that a person, a
# challenger or a client bot waits on (and their HTTP calls' dispatch and deadline
# watches) go here (bots/routing.py), and a worker of its own reads only it (`interactive`
# in docker/compose.yaml and scripts/run-dev), so tournaments and the ladder never take
# that capacity. "-": no such queue, all on the default one. A default queue of a test's
# or benchmark's own gets an interactive queue of its own with it.
INTERACTIVE_QUEUE = env.INTERACTIVE_QUEUE or (
    "interactive"
    if CELERY_TASK_DEFAULT_QUEUE == "celery"
    else f"{CELERY_TASK_DEFAULT_QUEUE}-interactive"
)
if INTERACTIVE_QUEUE == "-":
    INTERACTIVE_QUEUE = ""
CELERY_TASK_ROUTES = ("bots.routing.route_task",)
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
# A task is acknowledged after it ran, and re-queued if its worker dies: tasks must be
# idempotent (take ids, return early when the work is already done).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fix-up closes the database connections around every task unless this is
# set, and a new PostgreSQL connection costs more than a short task. Connections are
# instead kept as Django keeps them between requests (CONN_MAX_AGE, CONN_HEALTH_CHECKS):
# cardserver/celery.py runs Django's close_old_connections() before and after each task.
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# When the broker connection drops, the tasks a worker is running go on to their end (the
# match is played and recorded now) rather than being cancelled to run again later from
# the redelivered message; that copy finds the work done. Celery 6 means to make
# cancelling the default, so the choice is written here.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# A message sent while the broker restarts is retried for about 7 s before the send
# fails (Celery's default gives up after 0.6 s), so that a short broker outage does not
# lose the next round of a tournament that a worker sends after a commit.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 5,
    "interval_start": 0,
    "interval_step": 1,
    "interval_max": 2,
}
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
# django-celery-beat's scheduler (periodic tasks in the database, edited in the admin),
# which exits at once when another beat of the same database runs (cardserver/beat.py).
CELERY_BEAT_SCHEDULER = "cardserver.beat:LockedDatabaseScheduler"

# The health check (GET /api/v1/health/): seconds to wait for the broker's answer and for
# the workers' answers to a ping, and for how long the workers' answer is reused.
HEALTH_BROKER_TIMEOUT = 2.0
HEALTH_WORKER_TIMEOUT = env.HEALTH_WORKER_TIMEOUT
HEALTH_WORKER_CACHE = 10.0
# Seconds past its turn's deadline after which an active match with no move is stalled:
# reported by the health check (count and oldest) and listed by the admin
# (games.selectors.matches_stalled). Every match in play moves or is recovered well
# within it (a person loses on time at the deadline; a dead worker's claim lapses within
# 10 s and the sweep for lapsed claims runs every 10 s).
MATCHES_STALLED_AFTER = env.MATCHES_STALLED_AFTER
