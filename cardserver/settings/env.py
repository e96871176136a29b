"""Every environment variable the settings read, read once through pydantic-settings.

Not composed into ``cardserver.settings`` itself: a settings module imports ``env`` from
here and takes its values by name (``env.DEBUG``). Each variable is declared below with
its type and, where it is fixed, its default; a default that depends on another setting
(``SECURE_SSL_REDIRECT`` follows ``DEBUG``, the queues follow the default queue) is None
here and worked out by the module that defines the setting.

The rules, the same for every variable: an unset or blank variable takes its default;
text is stripped of surrounding spaces (a secret or password is taken as given); a value
that does not parse stops the process with one line naming the variable, its value and
what it should be (``ImproperlyConfigured``).
"""

from __future__ import annotations

from typing import Annotated, Any

from django.core.exceptions import ImproperlyConfigured
from pydantic import BeforeValidator, StringConstraints, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, SettingsConfigDict

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _flag(value: Any) -> Any:
    if isinstance(value, str):
        raw = value.strip().lower()
        if raw in _TRUE:
            return True
        if raw in _FALSE:
            return False
        raise ValueError(f"is not a boolean; use one of {', '.join(sorted(_TRUE | _FALSE))}.")
    return value


def _whole(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError("is not a whole number.") from None
    return value


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ValueError("is not a number.") from None
    return value


def _comma_list(value: Any) -> Any:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


Flag = Annotated[bool, BeforeValidator(_flag)]
Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, BeforeValidator(_number)]
Text = Annotated[str, StringConstraints(strip_whitespace=True)]
# NoDecode: a list is written "a,b", not as JSON (pydantic-settings' default for lists).
CommaList = Annotated[list[str], NoDecode, BeforeValidator(_comma_list)]


class _SetVariables(EnvSettingsSource):
    """The process's environment, without its blank variables: blank counts as unset."""

    def _load_env_vars(self):
        return {name: value for name, value in super()._load_env_vars().items() if value.strip()}


class Environment(BaseSettings):
    """The environment variables of the settings, by their names (case as written)."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore")

    # Core, security (base.py)
    CARDSERVER_VAR_DIR: Text | None = None  # default: var/ beside the code
    DEBUG: Flag = True
    SECRET_KEY: str = ""
    ALLOWED_HOSTS: CommaList | None = None  # default: local hosts with DEBUG, else none
    CSRF_TRUSTED_ORIGINS: CommaList = []
    SECURE_SSL_REDIRECT: Flag | None = None  # default: not DEBUG
    SECURE_PROXY_SSL_HEADER: Flag = False
    SECURE_HSTS_SECONDS: Whole = 31536000
    SECURE_HSTS_INCLUDE_SUBDOMAINS: Flag = True
    SECURE_HSTS_PRELOAD: Flag = True
    SECURE_COOKIES: Flag | None = None  # default: not DEBUG
    # Database, cache (base.py)
    DATABASE_URL: Text = ""  # default: SQLite in the var folder
    DATABASE_PREPARED_STATEMENTS: Flag = True
    CACHE_URL: Text = ""
    # Mail, links, logs (base.py)
    EMAIL_HOST: Text = ""
    EMAIL_BACKEND: Text = ""  # default: SMTP with EMAIL_HOST, else the console
    EMAIL_PORT: Whole = 587
    EMAIL_HOST_USER: str = ""
    EMAIL_HOST_PASSWORD: str = ""
    EMAIL_USE_TLS: Flag = True
    DEFAULT_FROM_EMAIL: Text = "arena@localhost"
    SITE_URL: Text = "http://127.0.0.1:8000"
    LOG_FORMAT: Text = ""  # default: text with DEBUG, else json
    LOG_LEVEL: Text = "INFO"
    # The API (api.py); THROTTLE_<SCOPE> empty: the scope's default rate
    API_NUM_PROXIES: Whole = 0
    THROTTLE_ANON: Text = ""
    THROTTLE_USER: Text = ""
    THROTTLE_PLAY: Text = ""
    THROTTLE_CREATE: Text = ""
    THROTTLE_REGISTER: Text = ""
    THROTTLE_LOGIN: Text = ""
    THROTTLE_CHALLENGE: Text = ""
    MAX_OPEN_MATCHES_PER_USER: Whole = 20
    MAX_OPEN_MATCHES_PER_BOT: Whole = 50
    API_MAX_BODY_SIZE: Whole = 64 * 1024
    DATA_UPLOAD_MAX_MEMORY_SIZE: Whole = 1024 * 1024
    REQUEST_BODY_TIMEOUT: Number = 10.0
    # Celery (queues.py)
    CELERY_BROKER_URL: Text = "filesystem://"
    EMBEDDED_BROKER_POLL: Number = 0.02
    REDIS_VISIBILITY_TIMEOUT: Number = 45.0
    CELERY_RESULT_BACKEND: Text | None = None
    CELERY_TASK_ALWAYS_EAGER: Flag = False
    CELERY_TASK_DEFAULT_QUEUE: Text = "celery"
    INTERACTIVE_QUEUE: Text | None = None  # default: follows the default queue
    HEALTH_WORKER_TIMEOUT: Number = 1.0
    MATCHES_STALLED_AFTER: Number = 60.0
    # Bots (bots.py)
    BOTS_ALLOW_PRIVATE_URLS: Flag | None = None  # default: DEBUG
    BOT_SECRET_KEYS: CommaList = []
    BOTS_BUILTIN_MOVES_PER_WRITE: Whole = 16
    BOTS_CALL_QUEUE: Text | None = None  # default: follows the default queue
    BOTS_CALLS_PER_OWNER: Whole = 100
    BOTS_CALLS_SHARE_URL: Text | None = None  # default: the cache's Redis
    BOTS_CALL_SEND_WITHIN: Number = 10.0
    BOTS_CALL_RECORDERS: Whole = 8
    BOTS_CALL_ANSWERS_PER_COMMIT: Whole = 8
    BOTS_TURN_MAX_LAPSES: Whole = 3
    CHALLENGES_MAX_PENDING: Whole = 20
    CHALLENGES_EXPIRE_AFTER: Number = 600.0
    # Live streams (live.py)
    LIVE_PUBSUB_URL: Text | None = None  # default: the cache's or the broker's Redis
    LIVE_UNSUBSCRIBE_AFTER: Number = 5.0
    LIVE_READ_THREADS: Whole = 8
    LIVE_KEEPALIVE: Number = 20.0
    LIVE_MAX_STREAMS_PER_ACCOUNT: Whole = 16
    LIVE_MAX_STREAMS_PER_IP: Whole = 256
    LIVE_CAPS_TTL: Number = 30.0
    LIVE_SEND_TIMEOUT: Number = 10.0
    # Tournaments, the ladder, sequential tests (tournaments.py)
    TOURNAMENT_IN_FLIGHT_PER_TOURNAMENT: Whole = 4
    TOURNAMENT_IN_FLIGHT_PER_OWNER: Whole = 6
    TOURNAMENT_IN_FLIGHT: Whole = 8
    SEQUENTIAL_TEST_MAX_GAMES: Whole = 20000
    SEQUENTIAL_GAMES_IN_FLIGHT: Whole = 8
    SEQUENTIAL_TESTS_PER_DAY: Whole = 20

    @classmethod
    def settings_customise_sources(cls, settings_cls, **sources):
        # The environment only: no .env file, no secrets folder, no constructor arguments.
        return (_SetVariables(settings_cls),)


def _error_line(error: dict) -> str:
    name = ".".join(str(part) for part in error["loc"])
    reason = error.get("ctx", {}).get("error")
    return f"{name}={error['input']!r} {reason or error['msg']}"


def environment() -> Environment:
    """Read the environment; raise ImproperlyConfigured, one line, if a value is bad."""
    try:
        return Environment()
    except ValidationError as exc:
        raise ImproperlyConfigured(" ".join(_error_line(e) for e in exc.errors())) from None


env = environment()
