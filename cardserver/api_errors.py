"""The error body shared by every API answer that is not a success.

Every 4xx and 5xx answer under ``/api/`` has this JSON body::

    {"error": {"code": "not_found", "message": "Not found.", "detail": null}}

``code``
    A stable, machine-readable string: DRF's code of the exception (``not_found``,
    ``not_authenticated``, ``authentication_failed``, ``permission_denied``,
    ``method_not_allowed``, ``parse_error``, ``throttled``, ...), ``invalid`` for a
    validation error, ``server_error`` for an unhandled exception. An ``APIException``
    subclass raised by a view chooses its own (``default_code``).
``message``
    A human-readable sentence. For a validation error it is "Invalid input.", or the
    error messages themselves when the error is a plain list of messages.
``detail``
    For a validation error, DRF's field errors unchanged (``{"field": ["message"]}``,
    ``non_field_errors`` included); for an exception raised with a dict or list as its
    detail, that detail; otherwise null.

A request that fails because the database does not answer (down, restarting) is
answered 503, ``database_unavailable``, with ``Retry-After``; under ``/api/`` also when
the failure happens outside a DRF view (``cardserver.middleware``).

The HTTP status and headers (``WWW-Authenticate``) stay as DRF sets them. A throttled
request (429, ``throttled``) has ``detail`` ``{"retry_after": <seconds>}`` and the same
whole seconds, rounded up, in its ``Retry-After`` header.

Every error of a DRF view reaches ``exception_handler`` (``REST_FRAMEWORK``'s
``EXCEPTION_HANDLER``), and every other answer under ``/api/`` Django's ``handler404``
and ``handler500`` (``cardserver.views``): no view maps errors itself. An app's domain
errors, which know nothing of HTTP, are given their answer once, with ``error_answer``
(``games.view_helpers`` for the match errors, ``bots.challenge_api`` for the challenges'),
where the app's views are declared.
"""

import logging
import math
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

INVALID_INPUT_MESSAGE = "Invalid input."

logger = logging.getLogger(__name__)


def error_body(*, code: str, message: str, detail: Any = None) -> dict[str, Any]:
    """Return the JSON body of an error answer."""
    return {"error": {"code": code, "message": message, "detail": detail}}


# The database server is down, restarting or unreachable: the request may succeed again
# in a moment, so the answer is a 503 with Retry-After, not a 500.
DATABASE_DOWN = (OperationalError, InterfaceError)
DATABASE_RETRY_AFTER = 2


def database_unavailable_response(exc: Exception) -> Response:
    """Return the 503 answer of a request that failed because the database did not answer."""
    logger.warning("Database unavailable: %s", exc)
    return Response(
        error_body(
            code="database_unavailable",
            message="The database is not answering; try again in a moment.",
            detail={"retry_after": DATABASE_RETRY_AFTER},
        ),
        status=503,
        headers={"Retry-After": str(DATABASE_RETRY_AFTER)},
    )


# An app's errors and how each is answered: error class -> the DRF or Django exception to
# answer it as, or the answer itself (``error_answer``).
_ANSWERS: dict[type[BaseException], Callable[[Any], Exception | Response]] = {}


def error_answer(error: type[Exception], answer: Callable[[Any], Exception | Response]) -> None:
    """Answer ``error``, raised in any API view, with what ``answer`` makes of it: the
    exception to answer it as (``Http404``, a DRF ``APIException``), or a ``Response``
    (``domain_error_response``). A subclass with an answer of its own is answered by that."""
    _ANSWERS[error] = answer


def domain_error_response(exc: Any, status: int) -> Response:
    """Return the answer to a domain error: its ``code``, its message and its ``detail``."""
    return Response(error_body(code=exc.code, message=str(exc), detail=exc.detail), status=status)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Return the error answer for an exception raised in a DRF view.

    Return None for an exception DRF does not handle, so that Django turns it into a 500
    (answered by ``cardserver.views.server_error``).
    """
    if isinstance(exc, DATABASE_DOWN):
        return database_unavailable_response(exc)
    for kind in type(exc).__mro__:
        answer = _ANSWERS.get(kind)
        if answer is not None:
            answered = answer(exc)
            if isinstance(answered, Response):
                return answered
            exc = answered
            break
    # DRF converts these two itself; doing it first gives the code and message below.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)

    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response

    if isinstance(exc, exceptions.ValidationError):
        response.data = error_body(
            code="invalid", message=_validation_message(exc.detail), detail=exc.detail
        )
    elif isinstance(exc.detail, list | dict):
        response.data = error_body(
            code=exc.default_code, message=str(exc.default_detail), detail=exc.detail
        )
    elif isinstance(exc, exceptions.Throttled):
        retry_after = max(1, math.ceil(exc.wait or 0))
        response["Retry-After"] = str(retry_after)
        response.data = error_body(
            code="throttled",
            message=f"Too many requests: try again in {retry_after} s.",
            detail={"retry_after": retry_after},
        )
    else:
        response.data = error_body(
            code=getattr(exc.detail, "code", None) or exc.default_code, message=str(exc.detail)
        )
    return response


def _validation_message(detail: Any) -> str:
    """Return the messages of a plain list of errors, else the generic message."""
    if isinstance(detail, list) and detail and all(isinstance(item, str) for item in detail):
        return " ".join(detail)
    return INVALID_INPUT_MESSAGE
