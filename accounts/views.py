"""The accounts API: sign up, obtain a token with a password, manage one's tokens."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.fields import get_error_detail
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors, services, tokens
from accounts.models import ApiToken
from accounts.serializers import (
    AccountTokenSerializer,
    ApiTokenCreatedSerializer,
    ApiTokenNameSerializer,
    ApiTokenSerializer,
    CredentialsSerializer,
    SignupSerializer,
)
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
        summary="Obtain a new API token with your username and password",
        description="Each call makes a new named token (shown this once: only its hash is "
        "stored); earlier tokens keep working until revoked. A user holds at most 50.",
        request=CredentialsSerializer,
        responses={
            200: AccountTokenSerializer,
            **error_responses(
                {400: "Missing fields (`invalid`), wrong credentials (`invalid_credentials`) "
                 "or too many tokens (`invalid`)."}
            ),
        },
        auth=[],
        tags=["accounts"],
    )
    def post(self, request: Request) -> Response:
        form = CredentialsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            key = services.token_obtain(**form.validated_data)
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        if key is None:
            raise InvalidCredentials()
        return Response(
            AccountTokenSerializer({"username": form.validated_data["username"], "token": key}).data
        )

    @extend_schema(
        summary="Revoke the API token this request is signed with",
        request=None,
        responses={
            204: None,
            **error_responses(
                {400: "Signed in with a session, not a token: revoke a token by its id.",
                 401: "No valid token."}
            ),
        },
        tags=["accounts"],
    )
    def delete(self, request: Request) -> Response:
        if not isinstance(request.auth, ApiToken):
            raise serializers.ValidationError(
                "This request carries no token to revoke: DELETE /api/v1/accounts/tokens/<id>/."
            )
        tokens.token_revoke(token_id=request.auth.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _invalid(exc: DjangoValidationError) -> serializers.ValidationError:
    return serializers.ValidationError(get_error_detail(exc))


class TokenListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="List your API tokens (names and first characters; never the tokens)",
        responses={200: ApiTokenSerializer(many=True)},
        tags=["accounts"],
    )
    def get(self, request: Request) -> Response:
        found = selectors.token_list(user=request.user)
        return Response(ApiTokenSerializer(found, many=True).data)

    @extend_schema(
        summary="Make a named API token, shown this once",
        request=ApiTokenNameSerializer,
        responses={
            201: ApiTokenCreatedSerializer,
            **error_responses({400: "A name over 60 characters, or 50 tokens held already."}),
        },
        tags=["accounts"],
    )
    def post(self, request: Request) -> Response:
        form = ApiTokenNameSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            token, key = tokens.token_create(
                user=request.user, name=form.validated_data.get("name", "")
            )
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        return Response(
            ApiTokenCreatedSerializer({**_fields(token), "token": key}).data,
            status=status.HTTP_201_CREATED,
        )


def _fields(token: ApiToken) -> dict:
    return {
        "id": token.pk, "name": token.name, "prefix": token.prefix,
        "created_at": token.created_at,
    }  # fmt: skip


class _OwnTokenView(APIView):
    permission_classes = [IsAuthenticated]

    def own_token(self, request: Request, token_id: int) -> ApiToken:
        """Return the user's token of that id; another user's token answers 404 too."""
        token = selectors.token_of_user(user=request.user, token_id=token_id)
        if token is None:
            raise exceptions.NotFound("You have no API token with this id.")
        return token


class TokenDetailView(_OwnTokenView):
    @extend_schema(
        summary="Rename one of your API tokens",
        request=ApiTokenNameSerializer,
        responses={200: ApiTokenSerializer, **error_responses({404: "No such token of yours."})},
        tags=["accounts"],
    )
    def patch(self, request: Request, token_id: int) -> Response:
        token = self.own_token(request, token_id)
        form = ApiTokenNameSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            token = tokens.token_rename(token_id=token.pk, name=form.validated_data.get("name", ""))
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        return Response(ApiTokenSerializer(token).data)

    @extend_schema(
        summary="Revoke one of your API tokens: it stops working at once",
        request=None,
        responses={204: None, **error_responses({404: "No such token of yours."})},
        tags=["accounts"],
    )
    def delete(self, request: Request, token_id: int) -> Response:
        tokens.token_revoke(token_id=self.own_token(request, token_id).pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenRotateView(_OwnTokenView):
    @extend_schema(
        summary="Rotate one of your API tokens: a new token, shown this once, same name",
        description="The old token stops working at once.",
        request=None,
        responses={
            200: ApiTokenCreatedSerializer, **error_responses({404: "No such token of yours."})
        },
        tags=["accounts"],
    )
    def post(self, request: Request, token_id: int) -> Response:
        token = self.own_token(request, token_id)
        try:
            token, key = tokens.token_rotate(token_id=token.pk)
        except ApiToken.DoesNotExist:
            raise exceptions.NotFound("You have no API token with this id.") from None
        return Response(ApiTokenCreatedSerializer({**_fields(token), "token": key}).data)
