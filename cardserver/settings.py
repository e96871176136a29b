"""Django settings of the card arena.

Every value that differs between machines comes from an environment variable; README.md
lists them. With no variables set, the project runs as a self-contained development
setup: DEBUG on, SQLite and an embedded Celery broker, both kept under ``var/``.
"""

import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from cardserver.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _env_bool(name: str, default: bool) -> bool:
    """Return the boolean in environment variable ``name``, or ``default`` if unset or empty."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={os.environ[name]!r} is not a boolean; use one of "
        f"{', '.join(sorted(_TRUE | _FALSE))}."
    )


def _env_list(name: str, default: list[str]) -> list[str]:
    """Return the comma-separated list in ``name``, or ``default`` if unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# Runtime data (SQLite database, embedded broker queues, collected static files).
VAR_DIR = Path(os.environ.get("CARDSERVER_VAR_DIR") or BASE_DIR / "var").resolve()

# --- Core -------------------------------------------------------------------------------

DEBUG = _env_bool("DEBUG", default=True)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"

ALLOWED_HOSTS = _env_list(
    "ALLOWED_HOSTS",
    default=["localhost", "127.0.0.1", "[::1]", "testserver"] if DEBUG else [],
)
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", default=[])

# --- Security (`manage.py check --deploy` passes with DEBUG off) -------------------------

# Behind a TLS proxy: redirect plain HTTP to HTTPS (the health check is exempt, so that a
# load balancer or a container health check may ask over plain HTTP), and trust the
# proxy's X-Forwarded-Proto header only when told that a proxy sets it.
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health/$"]
if _env_bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 0 if DEBUG else int(os.environ.get("SECURE_HSTS_SECONDS") or 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Cookies travel over HTTPS only. SECURE_COOKIES=0 is for trying the production shape on
# plain HTTP (docker/compose.yaml without a TLS proxy), where a secure session cookie
# would never come back and no one could sign in.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _env_bool("SECURE_COOKIES", default=not DEBUG)
SESSION_COOKIE_HTTPONLY = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "accounts",
    "games",
    "tournaments",
    "bots",
    "web",
]

MIDDLEWARE = [
    "cardserver.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "cardserver.middleware.NulPathMiddleware",
    "cardserver.middleware.QueryParameterMiddleware",
    "cardserver.middleware.RequestBodyLimitMiddleware",
    "cardserver.middleware.MatchContextMiddleware",
    "cardserver.middleware.WhiteNoiseMiddleware",
    # Django's session, authentication and message middleware, passed over for API
    # requests that carry no cookie (cardserver/middleware.py).
    "cardserver.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "cardserver.middleware.AuthenticationMiddleware",
    "cardserver.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "cardserver.urls"
WSGI_APPLICATION = "cardserver.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The project's own pages that no app holds (the ReDoc page of the API docs).
        "DIRS": [BASE_DIR / "cardserver" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------

DATABASE_URL = os.environ.get("DATABASE_URL", "").strip() or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
_database = dj_database_url.parse(DATABASE_URL)

if _database["ENGINE"] == "django.db.backends.sqlite3":
    # The web server, the Celery worker and beat write to one file. WAL lets readers run
    # beside a writer; IMMEDIATE takes the write lock when a transaction starts, so two
    # writers queue up (for up to `timeout` seconds) instead of failing with "database is
    # locked" halfway through.
    _database["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        **_database.get("OPTIONS", {}),
    }
    if _database["NAME"] and _database["NAME"] != ":memory:":
        Path(_database["NAME"]).parent.mkdir(parents=True, exist_ok=True)
else:
    # Reuse connections for a minute and check them before reuse, so a restarted
    # database server costs one failed check, not one failed request. The backend is
    # Django's, with a check that asks the socket rather than the server
    # (cardserver/postgresql/base.py).
    if _database["ENGINE"] == "django.db.backends.postgresql":
        _database["ENGINE"] = "cardserver.postgresql"
    _database["CONN_MAX_AGE"] = 60
    _database["CONN_HEALTH_CHECKS"] = True
    # A server that does not answer fails a request (503) within seconds, not minutes.
    _database.setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
    # Parameters sent apart from the SQL (no quoting on the client), and a statement run
    # 5 times on a connection is prepared, so the server parses and plans it once: the
    # few statements of play cost PostgreSQL about a third less CPU. A pooler in
    # transaction mode (PgBouncer) cannot carry prepared statements:
    # DATABASE_PREPARED_STATEMENTS=0 turns both off.
    if _env_bool("DATABASE_PREPARED_STATEMENTS", default=True):
        _database["OPTIONS"].setdefault("server_side_binding", True)
        _database["OPTIONS"].setdefault("prepare_threshold", 5)

DATABASES = {"default": _database}

# The cache holds the API's rate-limit counters, which every web process must share for
# a limit to mean what it says: CACHE_URL=redis://host:6379/1 when given; otherwise the
# broker's Redis when the broker is Redis; otherwise a table of the database
# (created by `migrate`: games/migrations/0007_cache_table.py), so that
# the embedded default's processes share them too.
CACHE_URL = os.environ.get("CACHE_URL", "").strip()
_broker_url = os.environ.get("CELERY_BROKER_URL", "").strip()
if not CACHE_URL and _broker_url.startswith(("redis://", "rediss://")):
    CACHE_URL = _broker_url
if CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            # Keys apart from the broker's when both share a Redis database.
            "KEY_PREFIX": "cache",
        }
    }
elif CACHE_URL:
    raise ImproperlyConfigured(f"CACHE_URL={CACHE_URL!r}: give a redis:// URL, or nothing.")
else:
    CACHES = {
        "default": {
            "BACKEND": "cardserver.cache.DatabaseCache",
            "LOCATION": "cardserver_cache",
            # Counters of a busy minute must not be culled while they count.
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth, i18n -------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files -----------------------------------------------------------------------

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise warns on every start while the folder is missing.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # The manifest storage needs `collectstatic` to have run, which a development
    # checkout has not, so it is used only with DEBUG off.
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# --- REST API ---------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "cardserver.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Request bodies are JSON (415 otherwise), as the schema says: a form would turn "0"
    # into false. The parser refuses JSON nested too deep (cardserver/renderers.py).
    "DEFAULT_PARSER_CLASSES": ["cardserver.renderers.JSONParser"],
    "EXCEPTION_HANDLER": "cardserver.api.exception_handler",
    # No ?format= chooses a renderer: the archive's filter of that name (?format=deal or
    # fool) would be taken for one and answered 404. The schema's ?format=json is its own
    # view's (cardserver/schema.py).
    "URL_FORMAT_OVERRIDE": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Rates per scope below; cardserver/throttling.py says which requests count where.
    "DEFAULT_THROTTLE_CLASSES": ["cardserver.throttling.ArenaThrottle"],
    # Proxies in front of the server whose X-Forwarded-For gives the client's IP. 0 (not
    # None, which would make DRF take the whole header as the client) is REMOTE_ADDR,
    # whatever a client writes in X-Forwarded-For.
    "NUM_PROXIES": int(os.environ.get("API_NUM_PROXIES") or 0),
}

# Requests per client and scope (cardserver/throttling.py): THROTTLE_<SCOPE>=<n>/<second,
# minute, hour or day>, or "off". The play scope lets a client play 100 moves a second.
_THROTTLE_DEFAULTS = {
    "anon": "1200/minute",
    "user": "1200/minute",
    "play": "6000/minute",
    "create": "60/minute",
    "register": "20/hour",
    "login": "20/minute",
}
API_THROTTLE_RATES: dict[str, str | None] = {}
for _scope, _default in _THROTTLE_DEFAULTS.items():
    _rate = os.environ.get(f"THROTTLE_{_scope.upper()}", "").strip().lower() or _default
    if _rate in ("off", "none"):
        API_THROTTLE_RATES[_scope] = None
    elif re.fullmatch(r"\d+/(s|sec|second|m|min|minute|h|hour|d|day)", _rate):
        API_THROTTLE_RATES[_scope] = _rate
    else:
        raise ImproperlyConfigured(
            f"THROTTLE_{_scope.upper()}={_rate!r} is not a rate like 60/minute, nor off."
        )
API_THROTTLE_CACHE = "default"

# Matches one requester may have open (waiting or active) through the API: those it
# created, and those a bot of its own (not a built-in one) is seated in. Tournament and
# ladder matches are made by the arena and do not count.
MAX_OPEN_MATCHES_PER_USER = int(os.environ.get("MAX_OPEN_MATCHES_PER_USER") or 20)
MAX_OPEN_MATCHES_PER_BOT = int(os.environ.get("MAX_OPEN_MATCHES_PER_BOT") or 50)

# Request bodies: an API request may send at most API_MAX_BODY_SIZE bytes (413 beyond,
# cardserver.middleware.RequestBodyLimitMiddleware; the largest real one, a match created
# with its deck, is under 2 KB); any other request at most DATA_UPLOAD_MAX_MEMORY_SIZE.
API_MAX_BODY_SIZE = int(os.environ.get("API_MAX_BODY_SIZE") or 64 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE") or 1024 * 1024)

SPECTACULAR_SETTINGS = {
    "TITLE": "Card Arena API",
    "DESCRIPTION": (
        "Bot arena for the Russian card games Durak and Volynshchik.\n\n"
        "Every 4xx and 5xx answer has the body "
        '`{"error": {"code": "...", "message": "...", "detail": ...}}`: `code` is a '
        "stable machine-readable string (`not_found`, `invalid`, `not_authenticated`, "
        "...), `message` a human-readable sentence, and `detail` the field errors of an "
        "`invalid` request, otherwise null."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from the static files of drf-spectacular-sidecar, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No validator badge: it would send the schema's URL to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "cardserver.schema.add_common_errors",
        "cardserver.schema.query_values_required",
    ],
    # Choice sets that share a field name get a name of their own.
    "ENUM_NAME_OVERRIDES": {
        "BotKindEnum": "bots.models.Bot.Kind",
        "RegistrableBotKindEnum": "bots.serializers.REGISTRABLE_KINDS",
        "MatchStatusEnum": "games.models.Match.Status",
        "MatchFormatEnum": "games.models.Match.Format",
        "TournamentFormatEnum": "tournaments.models.Tournament.Format",
        "HealthServiceEnum": ["ok", "error"],
    },
}

# --- Celery -----------------------------------------------------------------------------

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "").strip() or "filesystem://"
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
        "polling_interval": 0.25,
    }

# The longest a match-playing task may run: a soft limit, and the hard one a minute later
# (tournaments/tasks.py). A match of built-in players takes well under a minute; HTTP bots
# are bounded by their time limit per move. The hard limit only stops a runaway.
MATCH_TASK_TIME_LIMIT = 3600
if CELERY_BROKER_URL.startswith(("redis://", "rediss://", "redis+socket://")):
    # Redis gives a message that a worker has held unacknowledged for longer than the
    # visibility timeout (an hour by default) to another worker as well. Tasks are
    # acknowledged after they run, so the timeout must outlast the longest task, or a
    # match running past it would be started a second time and cost an attempt.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * MATCH_TASK_TIME_LIMIT}

CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "").strip() or None
CELERY_TASK_ALWAYS_EAGER = _env_bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# The queue tasks go to and workers read. Tests and benchmarks that start workers on a
# shared broker use one of their own, so that no other worker takes their tasks.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "").strip() or "celery"
CELERY_TASK_EAGER_PROPAGATES = True
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
HEALTH_WORKER_TIMEOUT = float(os.environ.get("HEALTH_WORKER_TIMEOUT") or 1.0)
HEALTH_WORKER_CACHE = 10.0

# --- Live streams and waits (games/live.py, games/streams.py) --------------------------

# Where a change of a match is published so that every web process wakes its waiters:
# a Redis URL (pub/sub), by default CACHE_URL's or the broker's Redis; "off" (or no Redis
# at all) is the embedded hub, which polls the database once per tick per process.
_live_url = os.environ.get("LIVE_PUBSUB_URL", "").strip()
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
# Embedded hub: seconds between two reads of the watched matches.
LIVE_POLL_INTERVAL = float(os.environ.get("LIVE_POLL_INTERVAL") or 0.1)
# Threads (each with its database connection) reading matches for streams and waits.
LIVE_READ_THREADS = int(os.environ.get("LIVE_READ_THREADS") or 8)
# Seconds between two keep-alive comments of an idle stream (proxies close silent ones).
LIVE_KEEPALIVE = float(os.environ.get("LIVE_KEEPALIVE") or 20.0)
# Open streams allowed per account and per client IP, in one web process (0: no cap).
LIVE_MAX_STREAMS_PER_ACCOUNT = int(os.environ.get("LIVE_MAX_STREAMS_PER_ACCOUNT") or 16)
LIVE_MAX_STREAMS_PER_IP = int(os.environ.get("LIVE_MAX_STREAMS_PER_IP") or 256)
# A stream whose client has not taken an event within this many seconds is cut off
# (its socket buffer is full): a slow reader is never buffered without bound.
LIVE_SEND_TIMEOUT = float(os.environ.get("LIVE_SEND_TIMEOUT") or 10.0)

# --- Bots -------------------------------------------------------------------------------

# Whether bot URLs may lead to loopback, private, link-local or multicast addresses: on in
# development and tests (bots on localhost), off in production, where a bot URL pointing
# into the arena's own network would let anyone reach its database or cloud metadata.
BOTS_ALLOW_PRIVATE_URLS = _env_bool("BOTS_ALLOW_PRIVATE_URLS", default=DEBUG)
# Seconds an HTTP bot has for a move when its match, tournament or ladder sets none.
BOTS_DEFAULT_MOVE_TIME_LIMIT = 5.0
# Failed pings or forfeits in a row after which a bot is marked unhealthy.
BOTS_UNHEALTHY_AFTER = 3
# Built-in players' moves in a row that the bot driver appends in one transaction: a
# decision costs microseconds, a write a millisecond or more; short enough that a match
# in progress keeps a log to resume from and spectators see it move.
BOTS_BUILTIN_MOVES_PER_WRITE = int(os.environ.get("BOTS_BUILTIN_MOVES_PER_WRITE") or 16)
# The I/O pool: the Celery queue on which HTTP bots' calls wait for their bots, read by
# the `bot-calls` worker (a thread pool of high concurrency, docker/compose.yaml), so that
# a bot that thinks holds a thread, never one of the CPU workers' processes. Empty: each
# call is made by the worker that plays the turn (the behaviour before the pool). A test
# or benchmark with a default queue of its own gets a call queue of its own with it.
BOTS_CALL_QUEUE = os.environ.get("BOTS_CALL_QUEUE", "").strip() or (
    "bot-calls"
    if CELERY_TASK_DEFAULT_QUEUE == "celery"
    else f"{CELERY_TASK_DEFAULT_QUEUE}-bot-calls"
)
if BOTS_CALL_QUEUE == "-":
    BOTS_CALL_QUEUE = ""
# Calls of one owner's bots that may be queued or in flight at once; more wait (as the
# arena's delay, never the bot's) until one ends, so that one owner's many slow bots
# cannot take the whole pool.
BOTS_CALLS_PER_OWNER = int(os.environ.get("BOTS_CALLS_PER_OWNER") or 100)
# Seconds a queued call may wait for a thread of the pool; one not sent by then is queued
# anew (the match's claim covers this wait, the bot's time and a grace).
BOTS_CALL_SEND_WITHIN = float(os.environ.get("BOTS_CALL_SEND_WITHIN") or 10.0)
# Seconds an arena turn may go with no move and no live driver claim before beat's
# bots.tasks.resume_abandoned_turns (every 10 s) hands it to a driver again: a driver
# that died lets go of its claim within seconds, and its match is taken up within ~30 s.
BOTS_TURN_ABANDONED_AFTER = float(os.environ.get("BOTS_TURN_ABANDONED_AFTER") or 15.0)

# --- Tournaments and ratings -----------------------------------------------------------

# Elo's K for a two-player match; an N-player match uses K / (N - 1) per pair of players.
RATING_ELO_K = 16.0
# The batch fit holds this bot (by name) at this rating, so the scale does not drift.
RATING_ANCHOR_BOT = "random"
RATING_ANCHOR = 1000.0
RATING_BOOTSTRAPS = 200
# A bot stays provisional on the leaderboard while its 95% interval is wider than this.
RATING_PROVISIONAL_WIDTH = 200.0
# Times a tournament or ladder match may be started (a worker that died counts) before it
# is given up as aborted: a match that kills its worker cannot loop for ever.
TOURNAMENT_MAX_ATTEMPTS = 3
# Seconds a running tournament match may go without a move, and with no bot driver's live
# claim on it, before the watchdog (every 10 s) sends it to a worker again: its worker
# died with the broker message unacknowledged, and a driver's claim lapses within
# seconds of its death (bots.driver), so the match is taken up within about 30 s.
TOURNAMENT_ABANDONED_AFTER = float(os.environ.get("TOURNAMENT_ABANDONED_AFTER") or 15.0)
# Seconds a pending match of the current round may wait before the watchdog sends it
# again (its round was never sent); long, since a match may wait behind a long queue.
TOURNAMENT_STALE_AFTER = 300.0
# The ladder: which tables it fills, how many per tick (beat runs the tick; its interval
# is in the admin), how many of its matches may be unfinished at once, and after how many
# forfeits in a row a bot is paused. The tables: every shape that has a rating pool
# (tournaments.pools.POOLS).
LADDER_TABLES = [
    ["durak", 2], ["durak", 3], ["durak", 4],
    ["volynshchik", 2], ["volynshchik", 3], ["volynshchik", 4], ["volynshchik", 5],
]  # fmt: skip
LADDER_TABLES_PER_TICK = 1
LADDER_MAX_ACTIVE = 20
LADDER_PAUSE_AFTER_FORFEITS = 3

# Sequential tests (tournaments/sequential.py, docs/sequential-tests.md): the defaults of
# a test, the largest cap on games one may ask for, and per user the games in flight at
# once (over all their tests; a pair is two games) and the tests started in 24 hours
# (staff are not counted).
SEQUENTIAL_TEST_DEFAULTS = {
    "elo0": 0.0, "elo1": 20.0, "alpha": 0.05, "beta": 0.05, "max_games": 4000,
    "move_time_limit": 5.0,
}
SEQUENTIAL_TEST_MAX_GAMES = int(os.environ.get("SEQUENTIAL_TEST_MAX_GAMES") or 20000)
SEQUENTIAL_GAMES_IN_FLIGHT = int(os.environ.get("SEQUENTIAL_GAMES_IN_FLIGHT") or 8)
SEQUENTIAL_TESTS_PER_DAY = int(os.environ.get("SEQUENTIAL_TESTS_PER_DAY") or 20)

# --- Logging ----------------------------------------------------------------------------

# One JSON object per line (cardserver/logs.py) in production, plain text in development.
LOG_FORMAT = (os.environ.get("LOG_FORMAT", "").strip().lower() or ("text" if DEBUG else "json"))
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} is not json or text.")
LOGGING = logging_config(
    log_format=LOG_FORMAT, level=os.environ.get("LOG_LEVEL", "INFO").strip().upper() or "INFO"
)
