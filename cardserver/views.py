"""Project-wide views: the health check and the error pages."""

import functools
import logging
import os
import sys
import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.templatetags.static import static
from django.urls import reverse
from django.views import defaults
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    permission_classes,
    throttle_classes,
)
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from cardserver import health as worker_health
from cardserver.api_errors import DATABASE_DOWN, error_body
from cardserver.celery import app as celery_app

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"

_health_serializer = inline_serializer(
    name="Health",
    fields={
        "status": serializers.ChoiceField(
            choices=["ok", "unavailable"],
            help_text="ok (200) when the database and the broker answer; else unavailable (503).",
        ),
        "database": serializers.ChoiceField(choices=["ok", "error"]),
        "broker": serializers.ChoiceField(choices=["ok", "error"]),
        "workers": inline_serializer(
            name="HealthWorkers",
            fields={
                "status": serializers.ChoiceField(
                    choices=["ok", "none", "unknown"],
                    help_text=(
                        "ok: at least one Celery worker answered a ping; none: none "
                        "answered; unknown: the broker is down or cannot carry pings."
                    ),
                ),
                "answered": serializers.IntegerField(
                    allow_null=True, help_text="Workers that answered, or null when unknown."
                ),
                "names": serializers.ListField(child=serializers.CharField()),
            },
        ),
        "bot_calls": inline_serializer(
            name="HealthBotCalls",
            fields={
                "status": serializers.ChoiceField(
                    choices=["ok", "none", "unknown", "off"],
                    help_text=(
                        "ok: a worker reads the I/O pool's queue (BOTS_CALL_QUEUE); none: "
                        "no worker does, so HTTP bots' calls wait and their matches stall; "
                        "unknown: the workers could not be asked; off: no call queue, each "
                        "call is made by the worker playing the turn."
                    ),
                ),
                "consumers": serializers.ListField(child=serializers.CharField()),
                "queue_depth": serializers.IntegerField(
                    allow_null=True,
                    help_text="Calls waiting in the queue (Redis broker), else null.",
                ),
            },
        ),
        "matches": inline_serializer(
            name="HealthMatches",
            required=False,
            fields={
                "status": serializers.ChoiceField(
                    choices=["ok", "stalled", "unknown"],
                    help_text=(
                        "stalled: some active match has had no move for "
                        "MATCHES_STALLED_AFTER seconds past its turn's deadline (they are "
                        "listed in the admin's matches, filter 'progress'). Absent when the "
                        "database is down."
                    ),
                ),
                "stalled": serializers.IntegerField(required=False),
                "oldest_seconds": serializers.FloatField(
                    allow_null=True, required=False,
                    help_text="Seconds since the oldest stalled match's turn started.",
                ),
                "oldest_match": serializers.IntegerField(allow_null=True, required=False),
            },
        ),
    },
)


@extend_schema(
    summary="Report whether the database, the broker and the Celery workers answer",
    description=(
        "200 when the database answers `SELECT 1` and the broker a ping (or, for the "
        "embedded broker, its folders are writable); 503 otherwise. Workers are asked "
        "through the broker which queues they read (at most `HEALTH_WORKER_TIMEOUT` "
        "seconds, the answer kept for `HEALTH_WORKER_CACHE` seconds) and reported, with "
        "the workers reading the HTTP bots' call queue and its depth (`bot_calls`), but "
        "do not change the status: a web server without workers still serves the API."
    ),
    responses={200: _health_serializer, 503: _health_serializer},
    auth=[],
)
@api_view(["GET"])
@authentication_classes([])
@permission_classes([AllowAny])
@throttle_classes([])
def health(request: Request) -> Response:
    """Answer 200 if the database and the broker answer, else 503; report the workers."""
    database = _database_status()
    broker = _broker_status()
    queues = _workers_queues() if broker == "ok" else None
    healthy = database == "ok" and broker == "ok"
    return Response(
        {
            "status": "ok" if healthy else "unavailable",
            "database": database,
            "broker": broker,
            "workers": worker_health.workers_report(queues),
            "bot_calls": worker_health.bot_calls_report(
                queues, _broker_url() if broker == "ok" else ""
            ),
            **(worker_health.app_reports() if database == "ok" else {}),
        },
        status=200 if healthy else 503,
    )


# The workers' last answer: (time.monotonic() when they were asked, their queues by worker,
# or None when they could not be asked).
_workers_seen: tuple[float, dict[str, list[str]] | None] | None = None


def _database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.exception("Health check: the database did not answer SELECT 1.")
        return "error"
    return "ok"


def _broker_status() -> str:
    """Return "ok" if the Celery broker answers within ``HEALTH_BROKER_TIMEOUT``."""
    url = _broker_url()
    timeout = settings.HEALTH_BROKER_TIMEOUT
    try:
        if url.startswith("filesystem://"):
            # The embedded broker is a folder: it answers if this process may write there.
            options = celery_app.conf.broker_transport_options or {}
            folders = [options.get("data_folder_in"), options.get("control_folder")]
            if not all(f and os.path.isdir(f) and os.access(f, os.W_OK) for f in folders):
                raise OSError(f"embedded broker folders not writable: {folders}")
        elif url.startswith(("redis://", "rediss://", "unix://")):
            import redis

            client = redis.Redis.from_url(
                url, socket_connect_timeout=timeout, socket_timeout=timeout
            )
            try:
                client.ping()
            finally:
                client.close()
        else:
            with celery_app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=timeout)
    except Exception:  # noqa: BLE001 - any failure to reach the broker is reported as such
        logger.warning("Health check: the broker did not answer.", exc_info=True)
        return "error"
    return "ok"


def _broker_url() -> str:
    return celery_app.conf.broker_url or ""


def _workers_queues() -> dict[str, list[str]] | None:
    """Return the queues of each worker that answers (asked at most every
    ``HEALTH_WORKER_CACHE`` seconds), or None when they cannot be asked."""
    global _workers_seen
    now = time.monotonic()
    if _workers_seen is not None and now - _workers_seen[0] < settings.HEALTH_WORKER_CACHE:
        return _workers_seen[1]
    try:
        queues = worker_health.worker_queues(settings.HEALTH_WORKER_TIMEOUT)
    except Exception:  # noqa: BLE001 - a transport without remote control, a broker gone
        logger.warning("Health check: the workers could not be asked.", exc_info=True)
        queues = None
    _workers_seen = (now, queues)
    return queues


@extend_schema(
    summary="List the API's starting points: its docs, its schema and its collections",
    responses={
        200: inline_serializer(
            name="ApiIndex",
            fields={
                "site": serializers.URLField(),
                "docs": serializers.URLField(),
                "redoc": serializers.URLField(),
                "schema": serializers.URLField(),
                "health": serializers.URLField(),
                "collections": serializers.DictField(child=serializers.URLField()),
            },
        )
    },
    auth=[],
)
@api_view(["GET"])
@authentication_classes([])
@permission_classes([AllowAny])
@throttle_classes([])
def api_index(request: Request) -> Response:
    """Answer the links a client starts from, so that /api/v1/ is not a dead end."""

    def link(name: str) -> str:
        return request.build_absolute_uri(reverse(name))

    return Response(
        {
            "site": request.build_absolute_uri("/"),
            "docs": link("api-docs"),
            "redoc": link("api-redoc"),
            "schema": link("api-schema"),
            "health": link("api-health"),
            "collections": {name: link(route) for name, route in API_COLLECTIONS},
        }
    )


# The collections a newcomer looks for first, by their URL names.
API_COLLECTIONS = (
    ("games", "game-list"),
    ("matches", "match-list"),
    ("bots", "bot-list"),
    ("tournaments", "tournament-list"),
    ("sequential_tests", "sequential-test-list"),
)


def favicon(request: HttpRequest) -> HttpResponse:
    """Send /favicon.ico, which browsers ask for whatever a page says, to the site's icon.

    The icon's URL is looked up per request: with hashed static files it exists only once
    collectstatic has run, not when the URLs are imported.
    """
    return HttpResponsePermanentRedirect(static("web/favicon.svg"))


# The API docs pages are third-party bundles (Swagger UI, ReDoc) that would fetch images,
# fonts or data from other sites (ReDoc draws Redocly's logo from its CDN): the browser is
# told to take those from this site only, so a reader's visit reaches no other host.
SAME_ORIGIN_MEDIA = "img-src 'self' data:; font-src 'self' data:; connect-src 'self'"


def same_origin_media(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a page view so that its images, fonts and fetches come from this site alone."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.headers.setdefault("Content-Security-Policy", SAME_ORIGIN_MEDIA)
        return response

    return wrapped


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer an unknown URL: the JSON error body under /api/, Django's page elsewhere.

    Django calls this only with DEBUG off; with DEBUG on it shows its technical 404 page.
    """
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body(code="not_found", message="Not found."), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """Answer an unhandled exception: the JSON error body under /api/, Django's page elsewhere.

    A database that does not answer is a 503 (``database_unavailable``), not a 500, even
    when it failed in a middleware: Django calls this view while handling the exception.
    """
    exc = sys.exc_info()[1]
    if isinstance(exc, DATABASE_DOWN):
        from cardserver.middleware import DatabaseUnavailableMiddleware

        return DatabaseUnavailableMiddleware.unavailable(request, exc)
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            error_body(code="server_error", message="A server error occurred."), status=500
        )
    return defaults.server_error(request)
