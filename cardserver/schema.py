"""OpenAPI helpers shared by the apps: the error body of ``cardserver.api_errors`` as a schema.

@extend_schema(responses={200: MatchSerializer, **error_responses({404: "No such match."})})
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. `stale_ply`.")
    message = serializers.CharField(help_text="A human-readable sentence.")
    detail = serializers.JSONField(
        allow_null=True,
        help_text=(
            "Field errors of an `invalid` request; for a refused move "
            '`{"current_ply": ..., "to_move": ...}`; otherwise null.'
        ),
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()

    class Meta:
        ref_name = "Error"


def error_responses(descriptions: dict[int, str]) -> dict[int, OpenApiResponse]:
    """Return ``{status: OpenApiResponse}`` with the error body, for ``extend_schema``."""
    return {
        status: OpenApiResponse(response=ErrorSerializer, description=description)
        for status, description in descriptions.items()
    }


def error_example(name: str, status: int, code: str, message: str, detail=None) -> OpenApiExample:
    """Return a documented example of an error answer."""
    return OpenApiExample(
        name,
        value={"error": {"code": code, "message": message, "detail": detail}},
        status_codes=[str(status)],
        response_only=True,
    )


# Answers any API operation can give, whatever its view documents: a malformed request,
# a bad token, a refused permission (or CSRF check of a session), a missing object or page,
# an oversized body (cardserver.middleware), a body that is not JSON, a rate limit
# (cardserver.throttling), a database that does not answer (cardserver.api_errors).
COMMON_ERRORS = {
    "400": "Invalid input (`invalid`, with the field errors in `detail`) or a body that is "
    "not JSON (`parse_error`).",
    "401": "No valid credentials where they are needed, or an invalid token.",
    "403": "Not allowed (`permission_denied`).",
    "404": "No such object, or no such page of a list (`not_found`).",
    "413": "A request body over `API_MAX_BODY_SIZE` bytes (`request_too_large`).",
    "415": "A request body that is not `application/json` (`unsupported_media_type`).",
    "429": "Too many requests (`throttled`): `detail.retry_after` and the `Retry-After` "
    "header say when to try again.",
    "503": "The database is not answering (`database_unavailable`): try again after "
    "`Retry-After` seconds.",
}
UNTHROTTLED = {"/api/v1/health/"}


def add_common_errors(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: document the errors every operation can answer.

    Added to each operation under /api/ that does not document the status itself, with
    the error body (``Error``) as its schema; the health check gets none of them.
    """
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    retry_after = {
        "Retry-After": {
            "schema": {"type": "integer"},
            "description": "Seconds to wait before the next request.",
        }
    }
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/") or path in UNTHROTTLED:
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in COMMON_ERRORS.items():
                if status not in responses:
                    responses[status] = {"content": error, "description": description}
                    if status in ("429", "503"):
                        responses[status]["headers"] = retry_after
            # The web server's own answer, before the application sees the request: its
            # body is the server's (not the API's error body).
            responses.setdefault("414", {"description": URI_TOO_LONG})
    return result


URI_TOO_LONG = "A URL longer than the web server reads (a few kilobytes)."


class FormatParameterNegotiation(DefaultContentNegotiation):
    """``?format=json`` or ``?format=yaml`` picks the schema's renderer.

    DRF's own ``?format=`` (``URL_FORMAT_OVERRIDE``) is off for the whole API, since the
    archive has a filter of that name; the schema view alone keeps the parameter.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        chosen = format_suffix or request.query_params.get("format")
        return super().select_renderer(request, renderers, chosen)


def query_values_required(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: a string query parameter has at least one
    character, since the API refuses an empty one (cardserver.middleware)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if parameter.get("in") == "query" and schema.get("type") == "string":
                    schema.setdefault("minLength", 1)
    return result
