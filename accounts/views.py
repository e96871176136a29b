"""The accounts API: sign up, obtain a token, revoke it."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import services
from accounts.serializers import AccountTokenSerializer, CredentialsSerializer, SignupSerializer
from cardserver.schema import error_responses


class InvalidCredentials(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_credentials"
    default_detail = "Wrong username or password."


class SignupView(APIView):
    # No session authentication here: a signed-in browser needs no CSRF token to sign up.
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        summary="Sign up: create an account and its API token",
        request=SignupSerializer,
        responses={
            201: AccountTokenSerializer,
            **error_responses({400: "Username taken or invalid, or password too weak."}),
        },
        auth=[],
        tags=["accounts"],
    )
    def post(self, request: Request) -> Response:
        form = SignupSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            user, key = services.account_signup(**form.validated_data)
        except services.SignupError as exc:
            raise serializers.ValidationError(exc.errors) from None
        return Response(
            AccountTokenSerializer({"username": user.username, "token": key}).data,
            status=status.HTTP_201_CREATED,
        )


class TokenView(APIView):
    def get_permissions(self):
        if self.request.method == "DELETE":
            return [IsAuthenticated()]
        return [AllowAny()]

    def get_authenticators(self):
        # Obtaining a token takes a username and password, nothing else.
        if self.request is not None and self.request.method == "POST":
            return []
        return super().get_authenticators()

    @extend_schema(
        summary="Obtain your API token with your username and password",
        request=CredentialsSerializer,
        responses={
            200: AccountTokenSerializer,
            **error_responses(
                {400: "Missing fields (`invalid`) or wrong credentials (`invalid_credentials`)."}
            ),
        },
        auth=[],
        tags=["accounts"],
    )
    def post(self, request: Request) -> Response:
        form = CredentialsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        key = services.token_obtain(**form.validated_data)
        if key is None:
            raise InvalidCredentials()
        return Response(
            AccountTokenSerializer({"username": form.validated_data["username"], "token": key}).data
        )

    @extend_schema(
        summary="Revoke your API token (the next POST issues a new one)",
        request=None,
        responses={204: None, **error_responses({401: "No valid token."})},
        tags=["accounts"],
    )
    def delete(self, request: Request) -> Response:
        services.token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
