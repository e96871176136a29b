"""The games API's archive and lifecycle: games, matches, joining, replays, verification.

Views are thin: they parse with an input serializer, find the requester's seat, call one
service or selector, and shape the answer with an output serializer. The play endpoints
are in ``games.player_views``; what both share is in ``games.view_helpers``, where the domain errors
(``games.errors``) become the error body of ``cardserver.api_errors``.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cardkit.engine.replay import replay_document
from cardserver.pagination import ArchiveCursorPagination
from cardserver.schema import error_responses
from games import errors, services
from games.catalog import GAME_CATALOG
from games.filters import MatchFilter
from games.models import Match
from games.reading import match_forfeit_reason, match_reading, match_seed_revealed
from games.seating import SeatedBot, SeatHolder, bot_named
from games.selectors import (
    match_decks,
    match_replay_steps,
    match_seats_named,
    matches_for_listing,
)
from games.serializers import (
    GameSerializer,
    MatchCreateSerializer,
    MatchDetailSerializer,
    MatchJoinSerializer,
    MatchSerializer,
    ReplaySerializer,
    VerificationSerializer,
)
from games.verification import match_verification
from games.view_helpers import (
    MATCH_ID,
    NOT_AUTHENTICATED,
    NOT_FOUND,
    match_detail,
    match_or_404,
)

# --- Games ------------------------------------------------------------------------------


class GameListView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        summary="List the games with their options, rules summary and move vocabulary",
        responses={200: GameSerializer(many=True)},
        tags=["games"],
    )
    def get(self, request: Request) -> Response:
        return Response(GameSerializer(GAME_CATALOG, many=True).data)


# --- Matches ----------------------------------------------------------------------------


class MatchListCreateView(generics.ListAPIView):
    serializer_class = MatchSerializer
    filterset_class = MatchFilter
    pagination_class = ArchiveCursorPagination

    def get_queryset(self):
        return matches_for_listing()

    @extend_schema(
        summary="List the match archive, newest first (filters, 50 to a page)",
        description=(
            "Pages by cursor: follow `next` for older matches, `previous` for newer ones. "
            "There is no count (counting the archive would scan it at every request); "
            "`?page=N` is still served, with a count capped at 10,000."
        ),
        tags=["matches"],
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Create a match",
        description=(
            "Seats are yourself, bots, or open (null). The match starts as soon as every "
            "seat is held: its deck is shuffled from a secret seed whose SHA-256 "
            "(`seed_commitment`) is published now and the seed revealed when it ends."
        ),
        request=MatchCreateSerializer,
        responses={
            201: MatchDetailSerializer,
            **error_responses(
                {
                    400: "Invalid options, seats or decks.",
                    **NOT_AUTHENTICATED,
                    409: "You (or a bot seated) have too many open matches "
                    "(`too_many_open_matches`).",
                }
            ),
        },
        examples=[
            OpenApiExample(
                "Durak against an open seat",
                value={"game": "durak", "players": 2, "seats": [{"user": "alice"}, None]},
                request_only=True,
            ),
        ],
        tags=["matches"],
    )
    def post(self, request: Request) -> Response:
        form = MatchCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        players = data["players"]
        specs = data.get("seats") or [{"user": request.user.username}] + [None] * (players - 1)
        seats = [_holder(spec, request) for spec in specs]
        services.match_quota_check(
            user=request.user, bots=[seat.bot for seat in seats if seat and seat.bot]
        )
        match = services.match_create(
            creator=request.user,
            game=data["game"],
            players=players,
            deck_size=data.get("deck_size"),
            format=data["format"],
            seats=seats,
            move_time_limit=data["move_time_limit"],
            rated=data["rated"],
            decks=data.get("decks"),
            dealer=data["dealer"],
        )
        return Response(match_detail(match_or_404(match.pk)), status=status.HTTP_201_CREATED)


def _holder(spec: dict | None, request: Request) -> SeatHolder | None:
    """Return the holder a seat spec of the request names (``{"user": ...}``, ``{"bot": ...}``)."""
    if spec is None:
        return None
    if "user" in spec:
        if spec["user"] != request.user.username:
            raise serializers.ValidationError(
                {"seats": ["You can seat yourself or bots; other people join by themselves."]}
            )
        return SeatHolder(user=request.user)
    return SeatHolder(bot=_bot(spec["bot"], field="seats"))


def _bot(name_or_id: str, *, field: str) -> SeatedBot:
    bot = bot_named(name_or_id)
    if bot is None:
        raise serializers.ValidationError({field: [f"No bot named {name_or_id!r}."]})
    return bot


class MatchDetailView(APIView):
    @extend_schema(
        summary="Read one match: options, seats, result and the public view of the table",
        description=(
            "While the match is played, `state` is what a spectator sees; once it is "
            "over, the whole table, the seed and the decks. A sealed match (`sealed`) "
            "shows no state, seed or decks until its deal group unseals."
        ),
        parameters=[MATCH_ID],
        responses={200: MatchDetailSerializer, **error_responses(NOT_FOUND)},
        tags=["matches"],
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(match_detail(match_or_404(pk)))


class MatchJoinView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Take an open seat (yourself or one of your bots)",
        parameters=[MATCH_ID],
        request=MatchJoinSerializer,
        responses={
            200: MatchDetailSerializer,
            **error_responses(
                {
                    400: "No such seat, or a bot that is not yours or does not play the game.",
                    **NOT_AUTHENTICATED,
                    **NOT_FOUND,
                    409: "The match has started, the seat is held, you already play in "
                    "this rated match, or your bot has too many open matches.",
                }
            ),
        },
        tags=["matches"],
    )
    def post(self, request: Request, pk: int) -> Response:
        form = MatchJoinSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        bot = form.validated_data.get("bot")
        bot = _bot(bot, field="bot") if bot else None
        if bot is not None:
            services.match_quota_check(user=request.user, bots=[bot])
        services.match_join(
            match_id=pk,
            user=request.user,
            seat_index=form.validated_data.get("seat"),
            bot=bot,
        )
        return Response(match_detail(match_or_404(pk)))


class MatchCancelView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Cancel a match that is still waiting for players (its creator only)",
        parameters=[MATCH_ID],
        request=None,
        responses={
            200: MatchDetailSerializer,
            **error_responses(
                {
                    **NOT_AUTHENTICATED,
                    403: "You did not create this match.",
                    **NOT_FOUND,
                    409: "The match has started.",
                }
            ),
        },
        tags=["matches"],
    )
    def post(self, request: Request, pk: int) -> Response:
        services.match_cancel(match_id=pk, user=request.user)
        return Response(match_detail(match_or_404(pk)))


class ReplayQuerySerializer(serializers.Serializer):
    ply = serializers.IntegerField(
        required=False, min_value=0, help_text="Only the state after this many moves."
    )


class MatchReplayView(APIView):
    @extend_schema(
        summary="Replay a match: the log with the state after every ply",
        description=(
            "For a finished match every state shows all hands, and the seed and decks are "
            "given. For a match in play, only the public view of each state. `?ply=N` "
            "gives the single step after N moves."
        ),
        parameters=[MATCH_ID, ReplayQuerySerializer],
        responses={
            200: ReplaySerializer,
            **error_responses(
                {
                    400: "A ply beyond the log.",
                    **NOT_FOUND,
                    409: "The match has not started (`match_not_started`) or is sealed "
                    "(`match_sealed`).",
                }
            ),
        },
        tags=["matches"],
    )
    def get(self, request: Request, pk: int) -> Response:
        form = ReplayQuerySerializer(data=request.query_params)
        form.is_valid(raise_exception=True)
        match = match_or_404(pk)
        if match.status not in (Match.Status.ACTIVE, Match.Status.FINISHED):
            raise errors.MatchNotStarted()
        reading = match_reading(match)
        if not reading.public:
            raise errors.MatchSealed()
        only = form.validated_data.get("ply")
        if only is not None and only > match.ply:
            raise serializers.ValidationError({"ply": [f"The log has {match.ply} moves."]})
        complete = reading.complete
        seat_names, seat_versions = match_seats_named(match)
        document = replay_document(
            match=match.pk,
            status=match.status,
            complete=complete,
            ply=match.ply,
            seed=match_seed_revealed(match),
            seed_commitment=match.seed_commitment,
            decks=match_decks(match) if complete else None,
            result=match.result,
            end_reason=match.end_reason,
            forfeit_seat=match.forfeit_seat,
            forfeit_reason=match_forfeit_reason(match),
            steps=match_replay_steps(match, only=only),
            seats=seat_names,
            seat_versions=seat_versions,
        )
        return Response(ReplaySerializer(document).data)


class MatchVerifyView(APIView):
    @extend_schema(
        summary="Verify a finished match: commitment, decks and log",
        description=(
            "Recomputes the commitment published at the start from the revealed seed (a "
            "seeded match: sha256(seed); a match of a deal group: from the group's seed, "
            "its deck number and its place in the group; explicit practice decks: their "
            "SHA-256), derives the decks, replays the log on them and checks that it ends "
            "in the stored result. `checks` says exactly what was checked."
        ),
        parameters=[MATCH_ID],
        responses={
            200: VerificationSerializer,
            **error_responses(
                {**NOT_FOUND, 409: "The match is not finished, or is sealed (`match_sealed`)."}
            ),
        },
        tags=["matches"],
    )
    def get(self, request: Request, pk: int) -> Response:
        match = match_or_404(pk)
        if match.status != Match.Status.FINISHED:
            raise errors.MatchNotFinished()
        if match_reading(match).sealed:
            raise errors.MatchSealed()
        return Response(VerificationSerializer(match_verification(match)).data)
