"""The challenges API: ask another owner's bot for a match; answer, cancel, list.

Signed-in users only. The rules (who may ask, answer or cancel) are
``bots.challenges``'; these views read the request and shape the answer.
"""

from __future__ import annotations

import django_filters
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from bots import challenge_selectors, challenges
from bots.models import Bot, Challenge
from cardserver.api_errors import domain_error_response, error_answer
from games.models import Match
from games.seating import SeatHolder
from games.serializers import DECK_SIZES, MAX_PLAYERS, MIN_PLAYERS, SeatSpecSerializer

# --- Shapes -------------------------------------------------------------------------------


class ChallengeCreateSerializer(serializers.Serializer):
    bot = serializers.CharField(help_text="The bot challenged: another owner's.")
    game = serializers.ChoiceField(choices=Match.Game.choices)
    players = serializers.IntegerField(min_value=MIN_PLAYERS, max_value=MAX_PLAYERS, default=2)
    deck_size = serializers.ChoiceField(
        choices=DECK_SIZES, required=False, help_text="Default: 36 for Durak, 32 for Volynshchik."
    )
    move_time_limit = serializers.FloatField(
        default=5.0, min_value=0.05, max_value=86400.0, help_text="Seconds per move."
    )
    seats = serializers.ListField(
        child=SeatSpecSerializer(),
        required=False,
        help_text=(
            'One entry per seat: `{"user": "<your username>"}`, `{"bot": "<name>"}` (yours, '
            "a built-in one, or the bot challenged, once). Default for two players: you in "
            "seat 0, the bot challenged in seat 1."
        ),
    )


class ChallengeDeclineSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class ChallengeSeatSerializer(serializers.Serializer):
    user = serializers.CharField(required=False, help_text="The challenger, in person.")
    bot = serializers.CharField(required=False)
    kind = serializers.CharField(
        required=False, help_text="A bot's kind: `builtin`, `http` or `client`."
    )


class ChallengeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Challenge.Status.choices)
    challenger = serializers.CharField()
    bot = serializers.CharField(help_text="The bot challenged.")
    game = serializers.CharField()
    players = serializers.IntegerField()
    deck_size = serializers.IntegerField()
    move_time_limit = serializers.FloatField()
    seats = ChallengeSeatSerializer(many=True)
    reason = serializers.CharField(help_text="Why it was declined.")
    answered_by = serializers.CharField(
        allow_null=True, help_text="Who answered; null when the bot's policy did."
    )
    match = serializers.IntegerField(allow_null=True, help_text="The match, once accepted.")
    created_at = serializers.DateTimeField()
    answered_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, challenge: Challenge) -> dict:
        return super().to_representation(challenge_selectors.challenge_data(challenge))


# --- Views --------------------------------------------------------------------------------


def challenge_errors_answer() -> None:
    """Answer the challenge errors raised in any view of the API (403, 409) through
    its one exception handler (``BotsConfig.ready``)."""
    error_answer(challenges.ChallengeError, lambda exc: domain_error_response(exc, exc.status))
    error_answer(Challenge.DoesNotExist, lambda exc: Http404("No such challenge."))


class ChallengeFilter(django_filters.FilterSet):
    role = django_filters.ChoiceFilter(
        choices=[("made", "made"), ("received", "received")],
        method="filter_role",
        help_text="`made`: challenges you made; `received`: to bots you own or are.",
    )
    status = django_filters.ChoiceFilter(choices=Challenge.Status.choices)

    class Meta:
        model = Challenge
        fields = ["role", "status"]

    def filter_role(self, queryset, name: str, value: str):
        user = self.request.user
        if value == "made":
            return queryset.filter(challenger=user)
        return queryset.exclude(challenger=user)


class ChallengeListView(generics.ListAPIView):
    """List the challenges you made or received, newest first; make one."""

    serializer_class = ChallengeSerializer
    filterset_class = ChallengeFilter
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema's generation
            return Challenge.objects.none()
        return challenge_selectors.challenges_visible_to(self.request.user)

    @extend_schema(
        request=ChallengeCreateSerializer,
        responses={201: ChallengeSerializer},
        description=(
            "Ask another owner's bot for an unrated match. Its policy may answer at once "
            "(`accepted`, with `match`; or `declined`); else it waits for its owner or the "
            "bot to accept or decline. Rate-limited per user (`challenge` scope); at most "
            "`CHALLENGES_MAX_PENDING` waiting at once (409 `too_many_challenges`)."
        ),
    )
    def post(self, request: Request) -> Response:
        form = ChallengeCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        bot = _bot(data["bot"], field="bot")
        specs = data.get("seats")
        if specs is None:
            if data["players"] != 2:
                raise serializers.ValidationError({"seats": ["Give the seats of the table."]})
            specs = [{"user": request.user.username}, {"bot": bot.name}]
        seats = [_holder(spec, request, bot) for spec in specs]
        challenge = challenges.challenge_create(
            challenger=request.user,
            bot=bot,
            game=data["game"],
            players=data["players"],
            deck_size=data.get("deck_size"),
            seats=seats,
            move_time_limit=data["move_time_limit"],
        )
        return Response(_shown(challenge.pk), status=status.HTTP_201_CREATED)


def _bot(name: str, *, field: str) -> Bot:
    bot = Bot.objects.filter(name__iexact=name).first()
    if bot is None:
        raise serializers.ValidationError({field: [f"No bot named {name!r}."]})
    return bot


def _holder(spec: dict, request: Request, challenged: Bot) -> SeatHolder:
    if "user" in spec:
        if spec["user"] != request.user.username:
            raise serializers.ValidationError(
                {"seats": ["You can seat yourself or bots; other people are not asked here."]}
            )
        return SeatHolder(user=request.user)
    if spec["bot"].lower() == challenged.name.lower():
        return SeatHolder(bot=challenged)
    return SeatHolder(bot=_bot(spec["bot"], field="seats"))


def _shown(challenge_id: int) -> dict:
    return ChallengeSerializer(challenge_selectors.challenges_all().get(pk=challenge_id)).data


def _visible(request: Request, pk: int) -> Challenge:
    """The challenge if the requester made or received it; 404 for everyone else."""
    return get_object_or_404(challenge_selectors.challenges_visible_to(request.user), pk=pk)


class _ChallengeView(generics.GenericAPIView):
    serializer_class = ChallengeSerializer
    permission_classes = [permissions.IsAuthenticated]


class ChallengeDetailView(_ChallengeView):
    @extend_schema(responses=ChallengeSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """A challenge you made or received."""
        return Response(ChallengeSerializer(_visible(request, pk)).data)


class ChallengeAcceptView(_ChallengeView):
    @extend_schema(request=None, responses=ChallengeSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Accept a waiting challenge (the bot's owner, or the bot with its own token): its
        match is created and starts at once."""
        challenges.challenge_accept(challenge_id=_visible(request, pk).pk, user=request.user)
        return Response(_shown(pk))


class ChallengeDeclineView(_ChallengeView):
    @extend_schema(request=ChallengeDeclineSerializer, responses=ChallengeSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Decline a waiting challenge (the bot's owner, or the bot), with a reason."""
        form = ChallengeDeclineSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        challenges.challenge_decline(
            challenge_id=_visible(request, pk).pk,
            user=request.user,
            reason=form.validated_data["reason"],
        )
        return Response(_shown(pk))


class ChallengeCancelView(_ChallengeView):
    @extend_schema(request=None, responses=ChallengeSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Withdraw a challenge you made while it waits."""
        challenges.challenge_cancel(challenge_id=_visible(request, pk).pk, user=request.user)
        return Response(_shown(pk))
