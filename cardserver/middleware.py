"""Project middleware: log lines' match id, the request body limit, a database that is down,
paths with a NUL character, repeated or empty query parameters, and the browser's
middleware kept off API requests that carry no cookie.

A client of the API (a bot, a script) sends ``Authorization: Token ...`` and no cookie:
no session, flash message or session user can concern its requests, yet Django's
session, authentication and message middleware would each still do their work on every
one of them. The subclasses below (``SessionMiddleware``, ``AuthenticationMiddleware``,
``MessageMiddleware``) are Django's, passed over for a request under ``/api/`` with no
cookie (``cookieless_api_request``); any request with a cookie, the browser's
pages and the browser's own calls to the API among them, goes through them as before.
DRF's session authentication finds no session user on such a request, exactly as when
the session middleware found no session cookie, and token authentication does not depend
on them. (Django's CSRF middleware stays as it is: ``check --deploy`` wants it, and DRF's
views, being CSRF-exempt, cost it little.)
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import middleware as auth_middleware
from django.contrib.messages import middleware as messages_middleware
from django.contrib.sessions import middleware as sessions_middleware
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

from cardserver.api_errors import DATABASE_DOWN, DATABASE_RETRY_AFTER, error_body
from cardserver.logs import set_match_id

API_PREFIX = "/api/"

logger = logging.getLogger(__name__)


def cookieless_api_request(request: HttpRequest) -> bool:
    """Return whether ``request`` is an API request that carries no cookie at all."""
    return not request.META.get("HTTP_COOKIE") and request.path.startswith(API_PREFIX)


class Screen:
    """A middleware that may answer a request itself before the view: a subclass writes
    ``handle(request)`` (no I/O) returning the response to give instead, or None."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        answer = self.handle(request)
        return self.get_response(request) if answer is None else answer

    def handle(self, request: HttpRequest) -> HttpResponse | None:
        return None


class _PassOverCookielessApi:
    """Call the next layer directly for an API request without a cookie."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if cookieless_api_request(request):
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_PassOverCookielessApi, sessions_middleware.SessionMiddleware):
    """Django's, except for API requests without a cookie (no session to load or save)."""


class AuthenticationMiddleware(_PassOverCookielessApi, auth_middleware.AuthenticationMiddleware):
    """Django's, except for API requests without a cookie: DRF authenticates those."""


class MessageMiddleware(_PassOverCookielessApi, messages_middleware.MessageMiddleware):
    """Django's, except for API requests without a cookie (no messages to show them)."""


class MatchContextMiddleware(Screen):
    """Make every log line of a request to one match's URL carry that match's id.

    The id is set when the view is known and left in place after the response, so the
    server's access-log line carries it too; the next request in the thread sets its own.
    """

    def handle(self, request: HttpRequest) -> None:
        set_match_id(None)

    def process_view(self, request: HttpRequest, view, args, kwargs) -> None:
        match = request.resolver_match
        if match is not None and (match.url_name or "").startswith("match-") and "pk" in kwargs:
            set_match_id(kwargs["pk"])


class NulPathMiddleware(Screen):
    """Answer 404 for a path with a NUL character (``%00``), before any view looks it up.

    No name in the arena can hold one (PostgreSQL refuses the character in text), so such
    a path names nothing; a lookup with it, by a bot's name or a pool's, would otherwise
    fail in the database with a 500.
    """

    def handle(self, request: HttpRequest) -> HttpResponse | None:
        if "\x00" in request.path:
            raise Http404("No such page: its path holds a NUL character.")
        return None


class QueryParameterMiddleware(Screen):
    """Answer 400 for an API request that gives a query parameter twice, or empty.

    Every query parameter of the API takes one value (the schema says so); Django would
    read the last of several, and the filters take an empty one for none at all, so
    ``?seat=0&seat=1`` or ``?finished_before=`` would be answered as if the client had
    asked something else.
    """

    def handle(self, request: HttpRequest) -> HttpResponse | None:
        if request.path.startswith(API_PREFIX) and request.GET:
            errors = {}
            for name, values in request.GET.lists():
                if len(values) > 1:
                    errors[name] = ["Given more than once."]
                elif values == [""]:
                    errors[name] = ["Empty: give a value, or leave the parameter out."]
            if errors:
                return JsonResponse(
                    error_body(
                        code="invalid",
                        message="Give each query parameter once, with a value: "
                        f"{', '.join(sorted(errors))}.",
                        detail=errors,
                    ),
                    status=400,
                )
        return None


def body_limit(path: str) -> int | None:
    """Return the most bytes a request to ``path`` may send as its body (None: no limit).

    ``API_MAX_BODY_SIZE`` under /api/; elsewhere ``DATA_UPLOAD_MAX_MEMORY_SIZE``, Django's
    own bound on a form's body (no page takes a file upload, the only kind it exempts).
    The ASGI server (``cardserver.wsgi_pool``) reads no byte of a body declared longer,
    and nginx's ``client_max_body_size`` (docker/nginx/) is the same two numbers.
    """
    if path.startswith(API_PREFIX):
        return settings.API_MAX_BODY_SIZE
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class RequestBodyLimitMiddleware(Screen):
    """Refuse a request whose body is larger than ``body_limit`` allows with a 413.

    The declared ``Content-Length`` is checked before anything reads the body, so an
    oversized request costs nothing but its headers: the ASGI server has not read it
    either. DRF reads a request's stream without Django's own check
    (``DATA_UPLOAD_MAX_MEMORY_SIZE``, which bounds form posts such as the admin's), hence
    this one. Django reads no more than ``Content-Length`` bytes of any body, so a body
    sent in chunks without a length is read as empty (the ASGI server gives the length it
    read of one that went over the limit).
    """

    def handle(self, request: HttpRequest) -> HttpResponse | None:
        limit = body_limit(request.path)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is None or length <= limit:
            return None
        if request.path.startswith(API_PREFIX):
            response: HttpResponse = JsonResponse(
                error_body(
                    code="request_too_large",
                    message=f"The request body is larger than {limit} bytes.",
                    detail={"max_bytes": limit},
                ),
                status=413,
            )
        else:
            response = HttpResponse(
                f"The request body is larger than {limit} bytes.\n",
                status=413,
                content_type="text/plain; charset=utf-8",
            )
        # The body is not read: the connection cannot be reused for another request.
        response["Connection"] = "close"
        return response


class RequestCyclesMiddleware(Screen):
    """Break the reference cycles a DRF view leaves, once its response is rendered.

    DRF's view, request and response refer to each other (``view.request``,
    ``view.response``, ``request.parser_context["view"]``, ``response.renderer_context``,
    and Django's ``view.head = view.get``), so nothing of a request (its headers, body,
    user, serializers, the response's data) was freed when it ended: the garbage
    collector freed it all (115 objects for a player's view), in young collections that
    held every thread of the process for 15-70 ms each, three or four a second under play:
    the tail of every other request's latency. Outermost, so that every other middleware
    is done with the response. (A list filtered by django-filter still leaves cycles: it
    builds a form class per request.)
    """

    def __call__(self, request: HttpRequest):
        return self.release(self.get_response(request))

    @staticmethod
    def release(response: HttpResponse) -> HttpResponse:
        context = getattr(response, "renderer_context", None)
        if context:
            response.renderer_context = None
            request, view = context.get("request"), context.get("view")
            if request is not None:
                request.parser_context = None
            if view is not None:
                vars(view).clear()
            # A serializer's data (ReturnDict, ReturnList) keeps the serializer, whose
            # fields and it refer to each other (``field.parent``, ``fields.serializer``).
            serializer = getattr(getattr(response, "data", None), "serializer", None)
            if serializer is not None:
                _unbind(serializer)
        return response


def _unbind(serializer) -> None:
    """Clear the attributes of a serializer and of every field under it (done with)."""
    pending = [serializer]
    while pending:
        attributes = vars(pending.pop())
        fields = attributes.get("fields")
        if fields is not None and hasattr(fields, "values"):
            pending.extend(fields.values())
            vars(fields).clear()
        child = attributes.get("child")
        if child is not None:
            pending.append(child)
        attributes.clear()


# The answers Django itself may give a request it cannot route or read, with their codes.
_API_ERRORS = {
    400: ("bad_request", "Bad request."),
    404: ("not_found", "Not found."),
    405: ("method_not_allowed", "Method not allowed."),
}


class ApiErrorBodyMiddleware:
    """Give a 400, 404 or 405 answer under /api/ that is not JSON the JSON error body.

    DRF's views and ``cardserver.views.not_found`` answer with it, but not every such
    answer passes through them: with ``DEBUG`` on Django shows its HTML 404 page for a
    path no URL matches (one with an encoded NUL, say), and its HTML 400 page for a
    request it cannot read (an unknown ``Host``). Outermost but one, so that every
    other middleware's answer passes here.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        known = _API_ERRORS.get(response.status_code)
        if (
            known is not None
            and request.path.startswith(API_PREFIX)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            code, message = known
            replaced = JsonResponse(
                error_body(code=code, message=message), status=response.status_code
            )
            for header in ("Allow", "Connection"):
                if header in response:
                    replaced[header] = response[header]
            return replaced
        return response


class DatabaseUnavailableMiddleware(Screen):
    """Answer 503 (not 500) when the database fails a request outside a DRF view.

    DRF views answer it themselves (``cardserver.api_errors.exception_handler``); this covers the
    other views (pages, admin) and, through ``cardserver.views.server_error``, failures in
    middleware. Under /api/ the answer is the JSON error body, elsewhere a short page.
    """

    def __call__(self, request: HttpRequest):
        try:
            return self.get_response(request)
        except DATABASE_DOWN as exc:
            return self.unavailable(request, exc)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if isinstance(exc, DATABASE_DOWN):
            return self.unavailable(request, exc)
        return None

    @staticmethod
    def unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
        """Return the 503 answer to ``request``, which the database failed."""
        logger.warning("Database unavailable: %s", exc)
        if request.path.startswith(API_PREFIX):
            response: HttpResponse = JsonResponse(
                error_body(
                    code="database_unavailable",
                    message="The database is not answering; try again in a moment.",
                    detail={"retry_after": DATABASE_RETRY_AFTER},
                ),
                status=503,
            )
        else:
            response = HttpResponse(
                "The arena's database is not answering; try again in a moment.\n",
                status=503,
                content_type="text/plain; charset=utf-8",
            )
        response["Retry-After"] = str(DATABASE_RETRY_AFTER)
        return response
