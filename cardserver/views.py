"""Project-wide views: the health check and the error pages."""

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from cardserver.api import error_body

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"

_health_serializer = inline_serializer(
    name="Health",
    fields={
        "status": serializers.ChoiceField(choices=["ok", "unavailable"]),
        "database": serializers.ChoiceField(choices=["ok", "error"]),
    },
)


@extend_schema(
    summary="Report whether the service and its database answer",
    responses={200: _health_serializer, 503: _health_serializer},
    auth=[],
)
@api_view(["GET"])
@authentication_classes([])
@permission_classes([AllowAny])
def health(request: Request) -> Response:
    """Answer 200 if the database runs ``SELECT 1``, else 503."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.exception("Health check failed: the database did not answer SELECT 1.")
        return Response({"status": "unavailable", "database": "error"}, status=503)
    return Response({"status": "ok", "database": "ok"})


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer an unknown URL: the JSON error body under /api/, Django's page elsewhere.

    Django calls this only with DEBUG off; with DEBUG on it shows its technical 404 page.
    """
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body(code="not_found", message="Not found."), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """Answer an unhandled exception: the JSON error body under /api/, Django's page elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            error_body(code="server_error", message="A server error occurred."), status=500
        )
    return defaults.server_error(request)
