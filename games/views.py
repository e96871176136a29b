"""The games API: games, matches, moves, waiting, replays and verification.

Views are thin: they parse with an input serializer, find the requester's seat, call one
service or selector, and shape the answer with an output serializer. The three endpoints
a playing client calls on every turn (``me``, ``wait``, ``moves``) build their answers in
their serializer's shape directly, since a serializer instance costs more than the rest
of such a request; a test holds the two to the same fields. Domain errors
(``games.errors``) become the error body of ``cardserver.api`` here.
"""

from __future__ import annotations

import time

from django.db.models import Q
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bots.models import Bot
from cardserver.api import error_body
from cardserver.renderers import JSONParser, JSONRenderer
from cardserver.schema import error_example, error_responses
from games import errors, services
from games.catalog import GAMES
from games.engine.replay import replay_document, replay_steps
from games.filters import MatchFilter
from games.models import Match
from games.rows import match_progress, match_row
from games.selectors import (
    match_decks,
    match_for_reading,
    match_log,
    match_state,
    match_states,
    match_verification,
    matches_for_listing,
    seats_of,
    seats_remember,
)
from games.serializers import (
    MAX_TIMEOUT,
    GameSerializer,
    MatchCreateSerializer,
    MatchDetailSerializer,
    MatchJoinSerializer,
    MatchSerializer,
    MoveOutcomeSerializer,
    MoveSubmitSerializer,
    PlayerViewSerializer,
    ReplaySerializer,
    SeatChoiceSerializer,
    VerificationSerializer,
)

STATUS_OF_ERROR: dict[type[errors.MatchError], int] = {
    errors.NotYourSeat: 403,
    errors.NotMatchCreator: 403,
    errors.IllegalMoveError: 400,
    errors.InvalidMatchRequest: 400,
    errors.IdempotencyKeyReused: 422,
}
IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_IDEMPOTENCY_KEY = 200
# Long-poll: the first checks come quickly, then every 200 ms.
WAIT_FIRST_SLEEP = 0.05
WAIT_MAX_SLEEP = 0.2
DEFAULT_WAIT = 25.0

MATCH_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Match id.")
SEAT_PARAMETER = OpenApiParameter(
    "seat",
    OpenApiTypes.INT,
    description="Your seat, when you hold several; default: your seat to move, else your lowest.",
)
NOT_FOUND = {404: "No match with this id."}
NOT_AUTHENTICATED = {401: "No valid token (Authorization: Token <key>)."}
NOT_YOUR_SEAT = {403: "You hold no seat in this match (or not the seat asked for)."}


class JsonOnly(DefaultContentNegotiation):
    """Negotiation of the play endpoints: they answer JSON whatever ``Accept`` says.

    DRF's default parses the ``Accept`` header on every request to choose among renderers;
    these views have one.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class MatchErrorsMixin:
    """Answer the domain errors of ``games.errors`` with the API's error body."""

    def handle_exception(self, exc):
        if isinstance(exc, errors.MatchError):
            return Response(
                error_body(code=exc.code, message=str(exc), detail=exc.detail),
                status=STATUS_OF_ERROR.get(type(exc), status.HTTP_409_CONFLICT),
            )
        if isinstance(exc, Match.DoesNotExist):
            exc = Http404("No match with this id.")
        return super().handle_exception(exc)


def _match_or_404(match_id: int) -> Match:
    try:
        return match_for_reading(match_id)
    except Match.DoesNotExist:
        raise Http404("No match with this id.") from None


def _bare_match_or_404(match_id: int) -> Match:
    """Return the match alone (no seats): the cheap read of the play endpoints."""
    match = match_row(match_id)
    if match is None:
        raise Http404("No match with this id.")
    return match


def _my_seat(mine: list[int], requested: int | None, to_move: int | None) -> int:
    """Return the seat the requester acts for; raise NotYourSeat if it holds none of it."""
    if requested is not None:
        if requested not in mine:
            raise errors.NotYourSeat()
        return requested
    if not mine:
        raise errors.NotYourSeat()
    return to_move if to_move in mine else mine[0]


def _public_state(match: Match) -> dict | None:
    """Return what anyone may see of the table: everything once the match is over."""
    if match.status == Match.Status.ACTIVE:
        return match_state(match).view(None)
    if match.status == Match.Status.FINISHED:
        return match_state(match).reveal()
    return None


def _detail(match: Match) -> dict:
    finished = match.status == Match.Status.FINISHED
    context = {
        "state": _public_state(match),
        "decks": match_decks(match) if finished else None,
    }
    return MatchDetailSerializer(match, context=context).data


def _player_view(match: Match, mine: list[int], seat: int | None) -> dict:
    """Return ``seat``'s view of the match (the public view when ``seat`` is None).

    The shape of ``PlayerViewSerializer``, built directly: this is the read a playing
    client makes before every move, and a serializer instance costs more than the rest.
    """
    state = None
    if match.status in (Match.Status.ACTIVE, Match.Status.FINISHED):
        state = match_state(match)
    your_turn = match.status == Match.Status.ACTIVE and seat is not None and match.to_move == seat
    view = None
    if state is not None:
        if seat is None and match.status == Match.Status.FINISHED:
            view = state.reveal()
        else:
            view = state.view(seat)
    return {
        "match": match.pk,
        "status": match.status,
        "seat": seat,
        "your_seats": mine,
        "ply": match.ply,
        "to_move": match.to_move,
        "your_turn": your_turn,
        "deadline_at": match.deadline_at,
        "legal_moves": state.legal_moves() if your_turn else None,
        "view": view,
        "result": match.result,
        "end_reason": match.end_reason,
    }


def _move_outcome(outcome: services.MoveOutcome) -> dict:
    """Return the answer to a move: the shape of ``MoveOutcomeSerializer``, built directly."""
    move = outcome.move
    return {
        "match": move.match_id,
        "ply": move.ply,
        "seat": move.seat,
        "move": move.move,
        "received_at": move.received_at,
        "time_taken": move.time_taken,
        "next_ply": move.ply + 1,
        "ended_match": outcome.ended_match,
    }


# --- Games ------------------------------------------------------------------------------


class GameListView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        summary="List the games with their options, rules summary and move vocabulary",
        responses={200: GameSerializer(many=True)},
        tags=["games"],
    )
    def get(self, request: Request) -> Response:
        return Response(GameSerializer(GAMES, many=True).data)


# --- Matches ----------------------------------------------------------------------------


class MatchListCreateView(MatchErrorsMixin, generics.ListAPIView):
    serializer_class = MatchSerializer
    filterset_class = MatchFilter

    def get_queryset(self):
        return matches_for_listing()

    @extend_schema(
        summary="List the match archive, newest first (filters, 50 to a page)",
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
            user=request.user, bots=[seat["bot"] for seat in seats if seat and "bot" in seat]
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
        return Response(_detail(_match_or_404(match.pk)), status=status.HTTP_201_CREATED)


def _holder(spec: dict | None, request: Request) -> dict | None:
    if spec is None:
        return None
    if "user" in spec:
        if spec["user"] != request.user.username:
            raise serializers.ValidationError(
                {"seats": ["You can seat yourself or bots; other people join by themselves."]}
            )
        return {"user": request.user}
    return {"bot": _bot(spec["bot"], field="seats")}


def _bot(name_or_id: str, *, field: str) -> Bot:
    condition = Q(name=name_or_id)
    if name_or_id.isdigit():
        condition |= Q(pk=int(name_or_id))
    bot = Bot.objects.filter(condition).first()
    if bot is None:
        raise serializers.ValidationError({field: [f"No bot named {name_or_id!r}."]})
    return bot


class MatchDetailView(MatchErrorsMixin, APIView):
    @extend_schema(
        summary="Read one match: options, seats, result and the public view of the table",
        description=(
            "While the match is played, `state` is what a spectator sees; once it is "
            "over, the whole table, the seed and the decks."
        ),
        parameters=[MATCH_ID],
        responses={200: MatchDetailSerializer, **error_responses(NOT_FOUND)},
        tags=["matches"],
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(_detail(_match_or_404(pk)))


class MatchJoinView(MatchErrorsMixin, APIView):
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
        return Response(_detail(_match_or_404(pk)))


class MatchCancelView(MatchErrorsMixin, APIView):
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
        return Response(_detail(_match_or_404(pk)))


class MatchMeView(MatchErrorsMixin, APIView):
    permission_classes = [IsAuthenticated]
    content_negotiation_class = JsonOnly
    # A playing client reads this before every move: JSON only, no negotiation to do.
    renderer_classes = [JSONRenderer]

    @extend_schema(
        summary="Read your view of a match: your hand, and your legal moves on your turn",
        parameters=[MATCH_ID, SEAT_PARAMETER],
        responses={
            200: PlayerViewSerializer,
            **error_responses({**NOT_AUTHENTICATED, **NOT_YOUR_SEAT, **NOT_FOUND}),
        },
        tags=["play"],
    )
    def get(self, request: Request, pk: int) -> Response:
        requested = None
        if request.query_params:
            form = SeatChoiceSerializer(data=request.query_params)
            form.is_valid(raise_exception=True)
            requested = form.validated_data.get("seat")
        # The hot read of a playing client: two light queries, no prefetch of holders.
        match = _bare_match_or_404(pk)
        mine = seats_of(request.user, match)
        seat = _my_seat(mine, requested, match.to_move)
        return Response(_player_view(match, mine, seat))


class WaitQuerySerializer(SeatChoiceSerializer):
    after_ply = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="Return once the match has more moves than this. Default: its ply now.",
    )
    timeout = serializers.FloatField(
        default=DEFAULT_WAIT,
        min_value=0,
        max_value=MAX_TIMEOUT,
        help_text="Seconds to wait at most (up to 30).",
    )


class MatchWaitView(MatchErrorsMixin, APIView):
    """Long-poll: hold the request until it is your turn or the match changes."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonOnly

    @extend_schema(
        summary="Wait until it is your turn or the match changes (long-poll)",
        description=(
            "Returns as soon as the match has more than `after_ply` moves, its status "
            "changes (it starts or ends), or it is the turn of one of your seats; otherwise "
            "after `timeout` seconds. The answer is your view (the public view for a "
            "spectator); compare its `ply` with `after_ply` to see whether anything changed. "
            "A server must run threaded workers (gunicorn `--threads`) for long-polls."
        ),
        parameters=[MATCH_ID, WaitQuerySerializer],
        responses={
            200: PlayerViewSerializer,
            **error_responses(
                {400: "Bad after_ply, timeout or seat.", **NOT_YOUR_SEAT, **NOT_FOUND}
            ),
        },
        tags=["play"],
    )
    def get(self, request: Request, pk: int) -> Response:
        form = WaitQuerySerializer(data=request.query_params)
        form.is_valid(raise_exception=True)
        match = _bare_match_or_404(pk)
        mine = seats_of(request.user, match)
        requested = form.validated_data.get("seat")
        if requested is not None:
            _my_seat(mine, requested, None)
        after_ply = form.validated_data.get("after_ply", match.ply)
        deadline = time.monotonic() + form.validated_data["timeout"]
        first_status = match.status
        sleep = WAIT_FIRST_SLEEP
        while True:
            progress = match_progress(pk)
            if progress is None:
                raise Http404("No match with this id.")
            ply, state, to_move = progress
            mine_to_move = requested if requested is not None else to_move
            if (
                ply > after_ply
                or state != first_status
                or state in (Match.Status.FINISHED, Match.Status.ABORTED)
                or (state == Match.Status.ACTIVE and to_move in mine and to_move == mine_to_move)
            ):
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            time.sleep(min(sleep, remaining))
            sleep = min(sleep * 1.5, WAIT_MAX_SLEEP)
        match = _bare_match_or_404(pk)
        seat = _my_seat(mine, requested, match.to_move) if mine else None
        return Response(_player_view(match, mine, seat))


class MatchMoveView(MatchErrorsMixin, APIView):
    permission_classes = [IsAuthenticated]
    content_negotiation_class = JsonOnly
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Submit a move",
        description=(
            "Send the `ply` of your view with one of its `legal_moves`. A request repeated "
            "with the same `Idempotency-Key` header, ply and move gets the first answer "
            "again (header `Idempotent-Replayed: true`) and nothing new is written. A move "
            "after the deadline (plus one second) loses the match on time."
        ),
        parameters=[
            MATCH_ID,
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="Any string up to 200 characters naming this move request.",
            ),
        ],
        request=MoveSubmitSerializer,
        responses={
            200: MoveOutcomeSerializer,
            **error_responses(
                {
                    400: "Not a legal move (`illegal_move`, the message names the rule), "
                    "a move that cannot be read (`invalid_move`), or a bad request body.",
                    **NOT_AUTHENTICATED,
                    **NOT_YOUR_SEAT,
                    **NOT_FOUND,
                    409: "Not your turn (`not_your_turn`), a stale ply (`stale_ply`) or a "
                    "match not in play (`match_not_active`); `detail.current_ply` is the "
                    "match's ply now.",
                    422: "The Idempotency-Key was used for another move "
                    "(`idempotency_key_reused`).",
                }
            ),
        },
        examples=[
            OpenApiExample(
                "Durak attack",
                value={"ply": 0, "move": {"type": "attack", "cards": ["8C", "8D"]}},
                request_only=True,
            ),
            error_example(
                "Stale ply",
                409,
                "stale_ply",
                str(errors.StalePly.message),
                {"current_ply": 13, "to_move": 1},
            ),
            error_example(
                "Illegal move",
                400,
                "illegal_move",
                "illegal move: 8C cannot cover 9C (lower rank, same suit)",
            ),
        ],
        tags=["play"],
    )
    def post(self, request: Request, pk: int) -> Response:
        data = _move_request(request.data)
        key = request.headers.get(IDEMPOTENCY_HEADER, "")
        if len(key) > MAX_IDEMPOTENCY_KEY:
            raise serializers.ValidationError(
                {IDEMPOTENCY_HEADER: [f"At most {MAX_IDEMPOTENCY_KEY} characters."]}
            )
        mine = seats_of(request.user, pk)
        if not mine and not Match.objects.filter(pk=pk).exists():
            raise Http404("No match with this id.")
        requested = data.get("seat")
        if requested is None and len(mine) > 1:
            to_move = Match.objects.filter(pk=pk).values_list("to_move", flat=True).first()
        else:
            to_move = None
        outcome = services.match_move_submit(
            match_id=pk,
            seat=_my_seat(mine, requested, to_move),
            ply=data["ply"],
            move=data["move"],
            idempotency_key=key,
        )
        # The move was played, so the match has started and its seats are fixed.
        seats_remember(match_id=pk, user=request.user, seats=mine)
        response = Response(_move_outcome(outcome))
        if outcome.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


_ABSENT = object()


def _move_request(data) -> dict:
    """Return the move request ``data`` validated as ``MoveSubmitSerializer`` validates it.

    The body every move sends, ``{"ply": <int>, "move": {"type": ...}}`` with perhaps a
    ``"seat": <int>``, is checked here directly (the same checks give the same values);
    any other body goes through the serializer, which accepts it or answers with its own
    errors.
    """
    if type(data) is dict:
        ply, move, seat = data.get("ply"), data.get("move"), data.get("seat", _ABSENT)
        if (
            type(ply) is int
            and ply >= 0
            and type(move) is dict
            and type(move.get("type")) is str
            and (seat is _ABSENT or (type(seat) is int and seat >= 0))
        ):
            valid = {"ply": ply, "move": move}
            if seat is not _ABSENT:
                valid["seat"] = seat
            return valid
    form = MoveSubmitSerializer(data=data)
    form.is_valid(raise_exception=True)
    return form.validated_data


class MatchResignView(MatchErrorsMixin, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Resign: your seat loses the match (a fool series too)",
        parameters=[MATCH_ID],
        request=SeatChoiceSerializer,
        responses={
            200: MatchDetailSerializer,
            **error_responses(
                {**NOT_AUTHENTICATED, **NOT_YOUR_SEAT, **NOT_FOUND, 409: "Not in play."}
            ),
        },
        tags=["play"],
    )
    def post(self, request: Request, pk: int) -> Response:
        form = SeatChoiceSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        match = _match_or_404(pk)
        seat = _my_seat(seats_of(request.user, match), form.validated_data.get("seat"), None)
        if match.status != Match.Status.ACTIVE:
            raise errors.MatchNotActive(match.status, match.ply)
        services.match_forfeit(
            match_id=pk, seat=seat, code="resign", detail=f"seat {seat} resigned"
        )
        return Response(_detail(_match_or_404(pk)))


class ReplayQuerySerializer(serializers.Serializer):
    ply = serializers.IntegerField(
        required=False, min_value=0, help_text="Only the state after this many moves."
    )


class MatchReplayView(MatchErrorsMixin, APIView):
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
                    409: "The match has not started (`match_not_started`).",
                }
            ),
        },
        tags=["matches"],
    )
    def get(self, request: Request, pk: int) -> Response:
        form = ReplayQuerySerializer(data=request.query_params)
        form.is_valid(raise_exception=True)
        match = _match_or_404(pk)
        if match.status not in (Match.Status.ACTIVE, Match.Status.FINISHED):
            raise errors.MatchNotStarted()
        only = form.validated_data.get("ply")
        if only is not None and only > match.ply:
            raise serializers.ValidationError({"ply": [f"The log has {match.ply} moves."]})
        complete = match.status == Match.Status.FINISHED
        moves = match_log(match, up_to_ply=only)
        document = replay_document(
            match=match.pk,
            status=match.status,
            complete=complete,
            ply=match.ply,
            seed=(match.seed or None) if complete else None,
            seed_commitment=match.seed_commitment,
            decks=match_decks(match) if complete else None,
            result=match.result,
            end_reason=match.end_reason,
            steps=replay_steps(match_states(match, moves), moves, complete=complete, only=only),
        )
        return Response(ReplaySerializer(document).data)


class MatchVerifyView(MatchErrorsMixin, APIView):
    @extend_schema(
        summary="Verify a finished match: commitment, decks and log",
        description=(
            "Recomputes sha256(seed) (the seed's 64 hex characters as ASCII) and compares "
            "it with the commitment published at the start, derives the decks from the "
            "seed, replays the log on them and checks that it ends in the stored result."
        ),
        parameters=[MATCH_ID],
        responses={
            200: VerificationSerializer,
            **error_responses({**NOT_FOUND, 409: "The match is not finished."}),
        },
        tags=["matches"],
    )
    def get(self, request: Request, pk: int) -> Response:
        match = _match_or_404(pk)
        if match.status != Match.Status.FINISHED:
            raise errors.MatchNotFinished()
        return Response(VerificationSerializer(match_verification(match)).data)
