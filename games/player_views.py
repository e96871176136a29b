"""The play endpoints of the games API: a player's view, waiting, moves and resigning.

The three endpoints a playing client calls on every turn (``me``, ``wait``, ``moves``)
build their answers in their serializer's shape directly, since a serializer instance
costs more than the rest of such a request; a test holds the two to the same fields.
"""

from __future__ import annotations

import asyncio

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cardserver.api_errors import error_body
from cardserver.renderers import JSONParser, JSONRenderer
from cardserver.schema import error_example, error_responses
from games import errors, live, match_endings, move_services
from games.models import Match
from games.rows import match_progress, match_row
from games.seats_held import seats_of, seats_remember
from games.serializers import (
    MAX_TIMEOUT,
    MatchDetailSerializer,
    MoveOutcomeSerializer,
    MoveSubmitSerializer,
    PlayerViewSerializer,
    SeatChoiceSerializer,
)
from games.streams import TERMINAL, StreamPlan
from games.view_helpers import (
    MATCH_ID,
    NOT_AUTHENTICATED,
    NOT_FOUND,
    NOT_YOUR_SEAT,
    bare_match_or_404,
    json_answer,
    match_detail,
    match_or_404,
    my_seat,
    player_view,
)

IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_IDEMPOTENCY_KEY = 200
DEFAULT_WAIT = 25.0

SEAT_PARAMETER = OpenApiParameter(
    "seat",
    {"type": "integer", "minimum": 0},
    description="Your seat, when you hold several; default: your seat to move, else your lowest.",
)


class JsonOnly(DefaultContentNegotiation):
    """Negotiation of the play endpoints: they answer JSON whatever ``Accept`` says.

    DRF's default parses the ``Accept`` header on every request to choose among renderers;
    these views have one.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type



def _move_outcome(outcome: move_services.MoveOutcome) -> dict:
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


class MatchMeView(APIView):
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
        match = bare_match_or_404(pk)
        mine = seats_of(request.user, match)
        seat = my_seat(mine, requested, match.to_move)
        return Response(player_view(match, mine, seat))


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


class MatchWaitView(APIView):
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
            "A waiting request holds no server thread; the streams (`stream/`, "
            "`/api/v1/stream/events/`) say the same with one connection for many changes."
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
        # Validates and finds the seats; the waiting itself is games.streams.run_wait's.
        form = WaitQuerySerializer(data=request.query_params)
        form.is_valid(raise_exception=True)
        match = bare_match_or_404(pk)
        progress = (match.ply, str(match.status), match.to_move)
        mine = seats_of(request.user, match)
        requested = form.validated_data.get("seat")
        if requested is not None:
            my_seat(mine, requested, None)
        request._request.live_plan = StreamPlan(
            match_id=pk,
            user=request.user,
            mine=mine,
            requested=requested,
            after_ply=form.validated_data.get("after_ply", progress[0]),
            timeout=form.validated_data["timeout"],
            first_status=progress[1],
            extra={"progress": progress},
        )
        return Response(None)


# The waiting itself, after MatchWaitView opened the request.



def _wait_over(plan: StreamPlan, progress: tuple[int, str, int | None]) -> bool:
    ply, status, to_move = progress
    mine_to_move = plan.requested if plan.requested is not None else to_move
    return (
        ply > plan.after_ply
        or status != plan.first_status
        or status in TERMINAL
        or (status == Match.Status.ACTIVE and to_move in plan.mine and to_move == mine_to_move)
    )


def wait_answer(plan: StreamPlan) -> tuple[int, dict]:
    match = match_row(plan.match_id)
    if match is None:
        return 404, {"detail": "No match with this id."}
    seat = my_seat(plan.mine, plan.requested, match.to_move) if plan.mine else None
    return 200, player_view(match, plan.mine, seat, store=False)


async def run_wait(plan: StreamPlan) -> HttpResponse:
    """Wait (on the live hub) until ``_wait_over`` or the timeout; answer the view."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + plan.timeout
    progress = plan.extra["progress"]
    if plan.timeout > 0 and not _wait_over(plan, progress):
        hub = live.hub()
        waiter = hub.waiter([live.match_key(plan.match_id)])
        try:
            await waiter.ready()
            progress = await live.run_sync(match_progress, plan.match_id)  # after subscribing
            while progress is not None and not _wait_over(plan, progress) and not hub.closing:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                await waiter.wait(remaining)
                messages = waiter.take()
                if messages and not waiter.overflowed:
                    last = messages[-1]
                    progress = (last["ply"], last["status"], last["to_move"])
                elif waiter.overflowed or hub.closing:
                    waiter.overflowed = False
                    progress = await live.run_sync(match_progress, plan.match_id)
        finally:
            waiter.close()
    status, data = await live.run_sync(wait_answer, plan)
    if status == 404:
        return json_answer(error_body(code="not_found", message=data["detail"]), status=404)
    return json_answer(data)


class MatchMoveView(APIView):
    permission_classes = [IsAuthenticated]
    content_negotiation_class = JsonOnly
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Submit a move",
        description=(
            "Send the `ply` of your view with one of its `legal_moves`, and perhaps a "
            "`comment` (why; at most 1024 bytes of UTF-8, hidden from the other players "
            "and spectators until the match is over). A request repeated "
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
                    "a move that cannot be read (`invalid_move`), or a bad request body "
                    "(`invalid`: a comment longer than 1024 bytes is one).",
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
        outcome = move_services.match_move_submit(
            match_id=pk,
            seat=my_seat(mine, requested, to_move),
            ply=data["ply"],
            move=data["move"],
            idempotency_key=key,
            comment=data.get("comment", ""),
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
    any other body (a comment among them) goes through the serializer, which accepts it
    or answers with its own errors.
    """
    if type(data) is dict and "comment" not in data:
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


class MatchResignView(APIView):
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
        match = match_or_404(pk)
        seat = my_seat(seats_of(request.user, match), form.validated_data.get("seat"), None)
        match_endings.match_resign(match_id=pk, seat=seat)
        return Response(match_detail(match_or_404(pk)))
