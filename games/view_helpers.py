"""What the views of the games API share: error answers, finding a match and the seat.

The archive and lifecycle views (``games.views``) and the play views
(``games.player_views``) both look a match up or answer 404, and find the seat a requester
acts for; the domain errors of ``games.errors`` are given their status here, once, for the
API's exception handler (``cardserver.api_errors``). The play views and the streams
(``games.streams``, ``games.stream_caps``) share a seat's view of a match (``player_view``)
and a bare JSON answer (``json_answer``): here, below all three, so that none of them
imports another to reach them.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.status import HTTP_409_CONFLICT

from cardserver.api_errors import domain_error_response, error_answer
from cardserver.renderers import JSONRenderer
from games import errors
from games.models import Match
from games.reading import MatchReading, match_reading
from games.rows import match_row
from games.selectors import match_decks, match_for_reading, match_state
from games.serializers import MatchDetailSerializer
from games.services import match_snapshot_refresh

STATUS_OF_ERROR: dict[type[errors.MatchError], int] = {
    errors.NotYourSeat: 403,
    errors.NotMatchCreator: 403,
    errors.IllegalMoveError: 400,
    errors.InvalidMatchRequest: 400,
    errors.IdempotencyKeyReused: 422,
}

MATCH_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Match id.")
NOT_FOUND = {404: "No match with this id."}
NOT_AUTHENTICATED = {401: "No valid token (Authorization: Token <key>)."}
NOT_YOUR_SEAT = {403: "You hold no seat in this match (or not the seat asked for)."}


def match_errors_answer() -> None:
    """Answer the match errors raised in any view of the API with their status and
    the error body, through its one exception handler (``GamesConfig.ready``)."""
    error_answer(
        errors.MatchError,
        lambda exc: domain_error_response(exc, STATUS_OF_ERROR.get(type(exc), HTTP_409_CONFLICT)),
    )
    error_answer(Match.DoesNotExist, lambda exc: Http404("No match with this id."))


def match_or_404(match_id: int) -> Match:
    """Return the match with its seats and their holders; raise Http404 if there is none."""
    try:
        return match_for_reading(match_id)
    except Match.DoesNotExist:
        raise Http404("No match with this id.") from None


def bare_match_or_404(match_id: int) -> Match:
    """Return the match alone (no seats): the cheap read of the play endpoints."""
    match = match_row(match_id)
    if match is None:
        raise Http404("No match with this id.")
    return match


def my_seat(mine: list[int], requested: int | None, to_move: int | None) -> int:
    """Return the seat the requester acts for; raise NotYourSeat if it holds none of it."""
    if requested is not None:
        if requested not in mine:
            raise errors.NotYourSeat()
        return requested
    if not mine:
        raise errors.NotYourSeat()
    return to_move if to_move in mine else mine[0]


def _public_state(match: Match, reading: MatchReading) -> dict | None:
    """Return what anyone may see of the table: everything once the match is over (and
    unsealed), nothing of a sealed match."""
    if not reading.public:
        return None
    if match.status == Match.Status.ACTIVE:
        return match_snapshot_refresh(match=match).view(None)
    if reading.complete:
        return match_snapshot_refresh(match=match).reveal()
    return None


def match_detail(match: Match) -> dict:
    """Return the match's answer in the shape of ``MatchDetailSerializer``."""
    reading = match_reading(match)
    context = {
        "state": _public_state(match, reading),
        "decks": match_decks(match) if reading.complete else None,
    }
    return MatchDetailSerializer(match, context=context).data


def json_answer(data: dict, status: int = 200) -> HttpResponse:
    return HttpResponse(JSONRenderer().render(data), status=status, content_type="application/json")


def player_view(match: Match, mine: list[int], seat: int | None, *, store: bool = True) -> dict:
    """Return ``seat``'s view of the match (the public view when ``seat`` is None).

    The shape of ``PlayerViewSerializer``, built directly: this is the read a playing
    client makes before every move, and a serializer instance costs more than the rest.
    Without ``store`` (the streams and the long-poll) a stale snapshot is replayed but not
    stored: a waiter's read never waits for the row lock of the move being played.
    """
    state = None
    if match.status in (
        Match.Status.ACTIVE, Match.Status.FINISHED
    ) and match_reading(match).seat_view(match.status, seat):
        state = (
            match_snapshot_refresh(match=match) if store else match_state(match)
        )
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
