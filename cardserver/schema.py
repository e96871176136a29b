"""OpenAPI helpers shared by the apps: the error body of ``cardserver.api`` as a schema.

@extend_schema(responses={200: MatchSerializer, **error_responses({404: "No such match."})})
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers


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
