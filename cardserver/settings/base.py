"""Core settings: paths, security, apps, middleware, templates, database, cache, auth,
static files and logging."""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from cardserver.logs import logging_config
from cardserver.settings.env import env

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# Runtime data (SQLite database, embedded broker queues, collected static files).
VAR_DIR = Path(env.CARDSERVER_VAR_DIR or BASE_DIR / "var").resolve()

# --- Core -------------------------------------------------------------------------------

DEBUG = env.DEBUG

SECRET_KEY = env.SECRET_KEY
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"

ALLOWED_HOSTS = env.ALLOWED_HOSTS
if ALLOWED_HOSTS is None:
    ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"] if DEBUG else []
CSRF_TRUSTED_ORIGINS = env.CSRF_TRUSTED_ORIGINS

# --- Security (`manage.py check --deploy` passes with DEBUG off) -------------------------

# Behind a TLS proxy: redirect plain HTTP to HTTPS (the health check is exempt, so that a
# load balancer or a container health check may ask over plain HTTP), and trust the
# proxy's X-Forwarded-Proto header only when told that a proxy sets it.
SECURE_SSL_REDIRECT = not DEBUG if env.SECURE_SSL_REDIRECT is None else env.SECURE_SSL_REDIRECT
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health/$"]
if env.SECURE_PROXY_SSL_HEADER:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 0 if DEBUG else env.SECURE_HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.SECURE_HSTS_INCLUDE_SUBDOMAINS
SECURE_HSTS_PRELOAD = env.SECURE_HSTS_PRELOAD
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Cookies travel over HTTPS only. SECURE_COOKIES=0 is for trying the production shape on
# plain HTTP (docker/compose.yaml without a TLS proxy), where a secure session cookie
# would never come back and no one could sign in.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = (
    not DEBUG if env.SECURE_COOKIES is None else env.SECURE_COOKIES
)
SESSION_COOKIE_HTTPONLY = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
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
    "cardserver.middleware.RequestCyclesMiddleware",
    "cardserver.middleware.ApiErrorBodyMiddleware",
    "cardserver.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "cardserver.middleware.NulPathMiddleware",
    "cardserver.middleware.QueryParameterMiddleware",
    "cardserver.middleware.RequestBodyLimitMiddleware",
    "cardserver.middleware.MatchContextMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
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
        # The replay viewer's partials are the kit's (cardkit/viewer/templates): a
        # standalone replay from `cardkit replay` has the same markup.
        "DIRS": [
            BASE_DIR / "cardserver" / "templates",
            BASE_DIR / "cardkit" / "viewer" / "templates",
        ],
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

DATABASE_URL = env.DATABASE_URL or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
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
    if env.DATABASE_PREPARED_STATEMENTS:
        _database["OPTIONS"].setdefault("server_side_binding", True)
        _database["OPTIONS"].setdefault("prepare_threshold", 5)

DATABASES = {"default": _database}

# The cache holds the API's rate-limit counters, which every web process must share for
# a limit to mean what it says: CACHE_URL=redis://host:6379/1 when given; otherwise the
# broker's Redis when the broker is Redis; otherwise a table of the database
# (created by `migrate`: games/migrations/0007_cache_table.py), so that
# the embedded default's processes share them too.
CACHE_URL = env.CACHE_URL
_broker_url = env.CELERY_BROKER_URL
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
# The replay viewer's script, card drawing and stylesheet are the kit's package data (a
# standalone replay from `cardkit replay` inlines them): one copy, served as web/<file>.
STATICFILES_DIRS = [("web", BASE_DIR / "cardkit" / "viewer" / "static")]
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

# --- Mail (bot owners are told when the arena pauses their bot: bots.notices) -----------

# The console backend by default (mails are written to the log's stream); SMTP when
# EMAIL_HOST is set, with the usual EMAIL_* settings.
EMAIL_HOST = env.EMAIL_HOST
EMAIL_BACKEND = env.EMAIL_BACKEND or (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env.EMAIL_PORT
EMAIL_HOST_USER = env.EMAIL_HOST_USER
EMAIL_HOST_PASSWORD = env.EMAIL_HOST_PASSWORD
EMAIL_USE_TLS = env.EMAIL_USE_TLS
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env.DEFAULT_FROM_EMAIL
# Where people reach the site, for links in mails (no request to take it from there).
SITE_URL = env.SITE_URL.rstrip("/") or "http://127.0.0.1:8000"

# --- Logging ----------------------------------------------------------------------------

# One JSON object per line (cardserver/logs.py) in production, plain text in development.
LOG_FORMAT = env.LOG_FORMAT.lower() or ("text" if DEBUG else "json")
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} is not json or text.")
LOGGING = logging_config(
    log_format=LOG_FORMAT, level=env.LOG_LEVEL.upper()
)
