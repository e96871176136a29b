"""The DRF views that open the two streams (``games.streams`` serves them).

Each checks what any API request is checked for (token or session, rate limits, the
query) and leaves a ``StreamPlan`` on the request; a stream counts once against the rate
limits, when it is opened, never per event.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cardserver.renderers import JSONRenderer
from cardserver.schema import error_responses
from cardserver.throttling import ArenaThrottle
from games.player_views import SEAT_PARAMETER, JsonOnly
from games.seats_held import seats_of
from games.serializers import SeatChoiceSerializer
from games.streams import NDJSON, SSE, StreamPlan, media_type_of
from games.view_helpers import (
    MATCH_ID,
    NOT_AUTHENTICATED,
    NOT_FOUND,
    NOT_YOUR_SEAT,
    bare_match_or_404,
    my_seat,
)

TOO_MANY = {429: "Too many requests, or this account or IP holds its cap of open streams."}

MATCH_STREAM_EXAMPLE = """retry: 1000

id: 12
event: state
data: {"match":7,"status":"active","seat":0,"your_seats":[0],"ply":12,"to_move":0,\
"your_turn":true,"deadline_at":"2026-12-01T21:00:05Z","legal_moves":[{"type":"take"}],\
"view":{"...":"..."},"result":null,"end_reason":""}

id: 13
event: move
data: {"match":7,"ply":13,"seat":0,"move":{"type":"take"},"received_at":"2026-12-01T21:00:02Z"}

id: 13
event: state
data: {"match":7,"ply":13,"your_turn":false,"...":"..."}

: keep-alive

id: 41
event: end
data: {"match":7,"status":"finished","result":{"loser":1,"out_order":[0]},"end_reason":"rules"}
"""

ACCOUNT_STREAM_EXAMPLE = """{"event":"match_started","data":{"match":7,"game":"durak","players":2,\
"your_seats":[0],"started_at":"2026-12-01T21:00:00Z"}}
{"event":"your_turn","data":{"match":7,"ply":0,"seat":0,"deadline_at":"2026-12-01T21:01:00Z",\
"legal_moves":[{"type":"attack","cards":["6S"]}],"view":{"...":"..."}}}

{"event":"match_finished","data":{"match":7,"status":"finished","result":{"loser":1},\
"end_reason":"rules","your_seats":[0]}}
"""


# One Server-Sent Event as a client's parser reads it (each field a string, the JSON of an
# event's payload in ``data``); schemathesis checks every event of a stream against it.
SSE_EVENT = {
    "type": "object",
    "properties": {
        "event": {"type": "string"},
        "data": {"type": "string", "description": "The event's payload, as JSON."},
        "id": {"type": "string", "description": "The ply the event shows."},
    },
}


class StreamQuerySerializer(SeatChoiceSerializer):
    after_ply = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text=(
            "Resume after this ply: the moves after it, then the view (as `Last-Event-ID`, "
            "which a browser's EventSource sends by itself when it reconnects)."
        ),
    )


def _last_event_id(request: Request) -> int | None:
    value = request.META.get("HTTP_LAST_EVENT_ID", "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise serializers.ValidationError({"Last-Event-ID": ["Give the ply of the last event."]})
    return int(value)


class MatchStreamView(APIView):
    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonOnly

    @extend_schema(
        summary="Follow a match as it happens (Server-Sent Events or NDJSON)",
        description=(
            "A long-lived response: the view of the requester's seat (its `legal_moves` on "
            "its turn), or the public view for a spectator or anonymous client, exactly as "
            "`me/` and the match page show them. Events: `state` (the view, the shape of "
            "`me/`) on opening and after every change; `move` (each move, as the public "
            "replay shows it) before the `state` it leads to; `end` (status, result) once "
            "the match is over, and then the response ends; `reconnect` when the server "
            "stops (connect again). Every event's `id` is the ply it shows: a client that "
            "reconnects with `Last-Event-ID` (or `?after_ply=`) gets every move it missed, "
            "once. Idle streams get a keep-alive (an SSE comment, or an empty NDJSON line) "
            "every 20 to 21 s.\n\n"
            "`text/event-stream` by default (a browser's `EventSource`); "
            "`Accept: application/x-ndjson` gives one JSON object per line, "
            '`{"event": ..., "id": ..., "data": {...}}`. Opening counts once against the '
            "rate limits; open streams are capped per account and per IP address (429 with "
            "`Retry-After`); a client that stops reading is cut off."
        ),
        parameters=[
            MATCH_ID,
            SEAT_PARAMETER,
            StreamQuerySerializer,
            OpenApiParameter(
                "Last-Event-ID",
                OpenApiTypes.INT,
                OpenApiParameter.HEADER,
                description="The ply of the last event received: resume after it.",
            ),
        ],
        responses={
            (200, SSE): OpenApiResponse(
                SSE_EVENT,
                description="Server-Sent Events.",
                examples=[OpenApiExample("A seat's stream", value=MATCH_STREAM_EXAMPLE)],
            ),
            (200, NDJSON): OpenApiResponse(OpenApiTypes.STR, description="NDJSON events."),
            **error_responses(
                {400: "Bad seat, after_ply or Last-Event-ID.", **NOT_YOUR_SEAT, **NOT_FOUND,
                 **TOO_MANY}
            ),  # fmt: skip
        },
        tags=["play"],
    )
    def get(self, request: Request, pk: int) -> Response:
        form = StreamQuerySerializer(data=request.query_params)
        form.is_valid(raise_exception=True)
        match = bare_match_or_404(pk)
        mine = seats_of(request.user, match)
        requested = form.validated_data.get("seat")
        if requested is not None:
            my_seat(mine, requested, None)
        after = _last_event_id(request)
        if after is None:
            after = form.validated_data.get("after_ply")
        request._request.live_plan = StreamPlan(
            match_id=pk,
            user=request.user,
            mine=mine,
            requested=requested,
            media_type=media_type_of(request),
            after_ply=after,
            ip=ArenaThrottle().get_ident(request),
        )
        return Response(None)


class AccountEventsView(APIView):
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonOnly

    @extend_schema(
        summary="Everything that concerns your account, on one stream (SSE or NDJSON)",
        description=(
            "One long-lived response per account (a person, or a client bot's token) for "
            "all its matches: a client bot in 50 matches holds one connection. Events: "
            "`match_started` (a match where you hold a seat is under way: its id, game, "
            "your seats), `your_turn` (match, ply, seat, deadline, your view and legal "
            "moves: send one to `moves/`), `match_finished` (status, result), `reconnect` "
            "when the server stops. On opening, every active match of yours is announced "
            "(`match_started`, then `your_turn` where it is your turn). Keep-alives, caps, "
            "rate limits and `Accept: application/x-ndjson` as for a match's stream."
        ),
        responses={
            (200, SSE): OpenApiResponse(SSE_EVENT, description="Server-Sent Events."),
            (200, NDJSON): OpenApiResponse(
                OpenApiTypes.STR,
                description="NDJSON events.",
                examples=[OpenApiExample("A bot's stream", value=ACCOUNT_STREAM_EXAMPLE)],
            ),
            **error_responses({**NOT_AUTHENTICATED, **TOO_MANY}),
        },
        tags=["play"],
    )
    def get(self, request: Request) -> Response:
        request._request.live_plan = StreamPlan(
            match_id=None,
            user=request.user,
            mine=[],
            media_type=media_type_of(request),
            ip=ArenaThrottle().get_ident(request),
        )
        return Response(None)
