"""The bots API: register, list, show, change, rotate credentials, enable, disable, ping.

Anyone may read; a bot's owner alone may change it (403 for everyone else).
"""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.exceptions import ValidationError
from rest_framework.fields import get_error_detail
from rest_framework.request import Request
from rest_framework.response import Response

from bots import services
from bots.models import Bot
from bots.serializers import (
    GAME_CHOICES,
    BotCredentialsSerializer,
    BotPingSerializer,
    BotRegisteredSerializer,
    BotRegisterSerializer,
    BotSerializer,
    BotUpdateSerializer,
)
from cardserver.filters import BooleanFilter


class IsOwnerOrReadOnly(permissions.BasePermission):
    message = "Only the bot's owner may change it."

    def has_object_permission(self, request: Request, view, bot: Bot) -> bool:
        return request.method in permissions.SAFE_METHODS or bot.owner_id == request.user.pk


class IsOwner(permissions.BasePermission):
    message = "Only the bot's owner may do this."

    def has_object_permission(self, request: Request, view, bot: Bot) -> bool:
        return bot.owner_id == request.user.pk


class BotFilter(django_filters.FilterSet):
    owner = django_filters.CharFilter(field_name="owner__username", help_text="Owner's username.")
    kind = django_filters.ChoiceFilter(choices=Bot.Kind.choices)
    game = django_filters.ChoiceFilter(
        choices=[(game, game) for game in GAME_CHOICES],
        method="filter_game",
        help_text="Bots that play this game.",
    )
    enabled = BooleanFilter()
    healthy = BooleanFilter()
    account = django_filters.ChoiceFilter(
        choices=[("me", "me")],
        method="filter_account",
        help_text="`me`: the client bot whose API token made the request (how a client "
        "bot learns its name).",
    )

    class Meta:
        model = Bot
        fields = ["owner", "kind", "game", "enabled", "healthy", "account"]

    def filter_game(self, queryset, name: str, value: str):
        # JSON containment is not available on SQLite; a game name quoted in the stored
        # JSON list is unambiguous, since no game's name is part of another's.
        return queryset.filter(games__icontains=f'"{value}"')

    def filter_account(self, queryset, name: str, value: str):
        user = self.request.user if self.request is not None else None
        if user is None or not user.is_authenticated:
            return queryset.none()
        return queryset.filter(account_id=user.pk)


def _invalid(exc: DjangoValidationError) -> ValidationError:
    """Return the API's 400 for a service's ValidationError, field errors kept."""
    return ValidationError(get_error_detail(exc))


class BotListView(generics.ListAPIView):
    """List bots (anyone), or register one (signed-in users)."""

    queryset = Bot.objects.select_related("owner")
    serializer_class = BotSerializer
    filterset_class = BotFilter

    @extend_schema(
        request=BotRegisterSerializer,
        responses={201: BotRegisteredSerializer},
        description=(
            "Register a bot. The answer holds its credential, shown this once: `secret` "
            "for an HTTP bot (it signs the arena's requests), `token` for a client bot. An "
            "HTTP bot is pinged at once; `last_ping_ok` and `last_ping_detail` say how it "
            "answered (registration succeeds either way)."
        ),
    )
    def post(self, request: Request) -> Response:
        given = BotRegisterSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            bot, credential = services.bot_register(owner=request.user, **given.validated_data)
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        context = {**self.get_serializer_context(), "credential": credential}
        answer = BotRegisteredSerializer(bot, context=context)
        return Response(answer.data, status=status.HTTP_201_CREATED)


class BotDetailView(generics.RetrieveAPIView):
    """Show a bot (anyone), or change its description, URL or games (its owner)."""

    queryset = Bot.objects.select_related("owner")
    serializer_class = BotSerializer
    lookup_field = "name"
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly]

    @extend_schema(
        request=BotUpdateSerializer,
        responses={200: BotSerializer},
        description="Change the bot's description, URL (HTTP bots; pinged at once) or games.",
    )
    def patch(self, request: Request, name: str) -> Response:
        bot = self.get_object()
        given = BotUpdateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            bot = services.bot_update(bot_id=bot.pk, **given.validated_data)
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        return Response(BotSerializer(bot, context=self.get_serializer_context()).data)


class _OwnerActionView(generics.GenericAPIView):
    """A POST on a bot that only its owner may make."""

    queryset = Bot.objects.select_related("owner")
    lookup_field = "name"
    permission_classes = [permissions.IsAuthenticated, IsOwner]


class BotRotateView(_OwnerActionView):
    serializer_class = BotCredentialsSerializer

    @extend_schema(
        request=None,
        responses={200: BotCredentialsSerializer},
        description=(
            "Replace the bot's secret (HTTP bots) or API token (client bots) and show the "
            "new one, this once. The old one stops working at once."
        ),
    )
    def post(self, request: Request, name: str) -> Response:
        bot = self.get_object()
        try:
            credential = services.bot_credentials_rotate(bot_id=bot.pk)
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        http = bot.kind == Bot.Kind.HTTP
        return Response(
            BotCredentialsSerializer(
                {
                    "name": bot.name,
                    "secret": credential if http else None,
                    "token": None if http else credential,
                }
            ).data
        )


class BotEnableView(_OwnerActionView):
    serializer_class = BotSerializer
    enabled = True

    @extend_schema(request=None, responses={200: BotSerializer})
    def post(self, request: Request, name: str) -> Response:
        """Enable the bot: it may be offered matches again."""
        bot = services.bot_set_enabled(bot_id=self.get_object().pk, enabled=self.enabled)
        return Response(BotSerializer(bot, context=self.get_serializer_context()).data)


class BotDisableView(BotEnableView):
    enabled = False

    @extend_schema(request=None, responses={200: BotSerializer})
    def post(self, request: Request, name: str) -> Response:
        """Disable the bot: it is offered no new matches; matches under way go on."""
        return super().post(request, name)


class BotPingView(_OwnerActionView):
    serializer_class = BotPingSerializer

    @extend_schema(
        request=None,
        responses={
            200: BotPingSerializer,
            400: OpenApiResponse(description="The bot is not an HTTP bot."),
        },
        description=(
            "Ping an HTTP bot now and record the outcome: `ok` false counts a failure, and "
            "enough failures in a row mark the bot unhealthy; a good answer clears them."
        ),
    )
    def post(self, request: Request, name: str) -> Response:
        bot = self.get_object()
        try:
            answer = services.bot_ping(bot_id=bot.pk)
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        bot = self.get_queryset().get(pk=bot.pk)
        data = {
            "ok": answer.ok,
            "fault": str(answer.fault) if answer.fault else None,
            "detail": answer.detail,
            "elapsed_ms": round(answer.elapsed * 1000),
            "bot": bot,
        }
        return Response(BotPingSerializer(data, context=self.get_serializer_context()).data)
