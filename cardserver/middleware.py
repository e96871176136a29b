"""Project middleware: the match id of a request's log lines, and the request body limit."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from cardserver.api import error_body
from cardserver.logs import set_match_id

API_PREFIX = "/api/"


class MatchContextMiddleware:
    """Make every log line of a request to one match's URL carry that match's id.

    The id is set when the view is known and left in place after the response, so the
    server's access-log line carries it too; the next request in the thread sets its own.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        set_match_id(None)
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs) -> None:
        match = request.resolver_match
        if match is not None and (match.url_name or "").startswith("match-") and "pk" in kwargs:
            set_match_id(kwargs["pk"])


class RequestBodyLimitMiddleware:
    """Refuse an API request whose body is larger than ``API_MAX_BODY_SIZE`` with a 413.

    The declared ``Content-Length`` is checked before anything reads the body, so an
    oversized request costs nothing but its headers. DRF reads a request's stream without
    Django's own check (``DATA_UPLOAD_MAX_MEMORY_SIZE``, which bounds form posts such as
    the admin's), hence this one. Django reads no more than ``Content-Length`` bytes of
    any body, so a body sent in chunks without a length is read as empty.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(API_PREFIX):
            limit = settings.API_MAX_BODY_SIZE
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if limit is not None and length > limit:
                response = JsonResponse(
                    error_body(
                        code="request_too_large",
                        message=f"The request body is larger than {limit} bytes.",
                        detail={"max_bytes": limit},
                    ),
                    status=413,
                )
                # The body is not read: the connection cannot be reused for another request.
                response["Connection"] = "close"
                return response
        return self.get_response(request)
