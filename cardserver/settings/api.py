"""The REST API: DRF, rate limits, caps on open matches and request bodies, the schema."""

import re

from django.core.exceptions import ImproperlyConfigured

from cardserver.settings.env import env

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Page numbers with a count that stops at 10,000 (the match archive pages by cursor):
    # cardserver/pagination.py.
    "DEFAULT_PAGINATION_CLASS": "cardserver.pagination.CappedPageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Request bodies are JSON (415 otherwise), as the schema says: a form would turn "0"
    # into false. The parser refuses JSON nested too deep (cardserver/renderers.py).
    "DEFAULT_PARSER_CLASSES": ["cardserver.renderers.JSONParser"],
    "EXCEPTION_HANDLER": "cardserver.api_errors.exception_handler",
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
    "NUM_PROXIES": env.API_NUM_PROXIES,
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
    "challenge": "30/hour",
}
API_THROTTLE_RATES: dict[str, str | None] = {}
for _scope, _default in _THROTTLE_DEFAULTS.items():
    _rate = getattr(env, f"THROTTLE_{_scope.upper()}").lower() or _default
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
MAX_OPEN_MATCHES_PER_USER = env.MAX_OPEN_MATCHES_PER_USER
MAX_OPEN_MATCHES_PER_BOT = env.MAX_OPEN_MATCHES_PER_BOT

# Request bodies: an API request may send at most API_MAX_BODY_SIZE bytes (413 beyond,
# cardserver.middleware.RequestBodyLimitMiddleware; the largest real one, a match created
# with its deck, is under 2 KB); any other request at most DATA_UPLOAD_MAX_MEMORY_SIZE.
API_MAX_BODY_SIZE = env.API_MAX_BODY_SIZE
DATA_UPLOAD_MAX_MEMORY_SIZE = env.DATA_UPLOAD_MAX_MEMORY_SIZE
# Seconds a request's whole body may take to arrive at the ASGI server (cardserver.asgi)
# before the request is answered 408 and its connection closed: 64 KB in 10 s is a
# modem's pace, and a client that stops sending holds nothing for longer. nginx in front
# (docker/nginx/) gives the same 10 s between two reads of a body.
REQUEST_BODY_TIMEOUT = env.REQUEST_BODY_TIMEOUT

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
