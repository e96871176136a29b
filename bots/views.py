"""The bots API: register, list, show, change, rotate credentials, enable, disable, ping.

Anyone may read; a bot's owner alone may change it (403 for everyone else).
"""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.fields import get_error_detail
from rest_framework.request import Request
from rest_framework.response import Response

from bots import headtohead, services, versions
from bots.models import Bot, BotVersion
from bots.serializers import (
    GAME_CHOICES,
    BotCredentialsSerializer,
    BotPingSerializer,
    BotRegisteredSerializer,
    BotRegisterSerializer,
    BotSerializer,
    BotUpdateSerializer,
    BotVersionCreateSerializer,
    BotVersionSerializer,
    OpponentRecordSerializer,
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

    queryset = Bot.objects.select_related("owner", "version")
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

    queryset = Bot.objects.select_related("owner", "version")
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

    queryset = Bot.objects.select_related("owner", "version")
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


class BotOpponentsView(generics.GenericAPIView):
    queryset = Bot.objects.all()
    lookup_field = "name"
    serializer_class = OpponentRecordSerializer
    pagination_class = None

    @extend_schema(
        responses={200: OpponentRecordSerializer(many=True)},
        description=(
            "The bot's head-to-head record against every bot it has met, per game shape: "
            "games (pairings of a seat of each at a finished match), points, wins, losses, "
            "draws, the score with its 95% interval, and the bot's forfeits by kind."
        ),
    )
    def get(self, request: Request, name: str) -> Response:
        bot, version = _bot_and_version_or_404(name)
        records = headtohead.bot_opponents(mine=versions.seats_of(bot, version))
        return Response(OpponentRecordSerializer(records, many=True).data)


def _bot_and_version_or_404(name: str) -> tuple[Bot, BotVersion | None]:
    try:
        return versions.bot_and_version(name)
    except Bot.DoesNotExist:
        raise NotFound(f"No bot is named {name.partition('@')[0]!r}.") from None
    except BotVersion.DoesNotExist:
        raise NotFound(f"{name!r} names no version of the bot.") from None


class BotVersionsView(generics.GenericAPIView):
    queryset = Bot.objects.all()
    lookup_field = "name"
    serializer_class = BotVersionSerializer
    pagination_class = None
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly]

    @extend_schema(
        responses={200: BotVersionSerializer(many=True)},
        description="The bot's versions, oldest first, with the finished matches each played.",
    )
    def get(self, request: Request, name: str) -> Response:
        bot = self.get_object()
        lines = versions.bot_version_lines(bot=bot)
        return Response(BotVersionSerializer(lines, many=True).data)

    @extend_schema(
        request=BotVersionCreateSerializer,
        responses={201: BotVersionSerializer, 400: OpenApiResponse(description="A label "
                   "that is not one, or one the bot has used before.")},
        description=(
            "Start a new version of the bot (its owner): from now on every seat it takes "
            "records this version. The live Elo stays the bot's."
        ),
    )
    def post(self, request: Request, name: str) -> Response:
        bot = self.get_object()
        given = BotVersionCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            version = versions.bot_version_start(
                bot_id=bot.pk, reason=BotVersion.Reason.OWNER, label=given.validated_data["label"]
            )
        except DjangoValidationError as exc:
            raise _invalid(exc) from None
        bot.refresh_from_db()
        [line] = [x for x in versions.bot_version_lines(bot=bot) if x["id"] == version.pk]
        return Response(BotVersionSerializer(line).data, status=status.HTTP_201_CREATED)
