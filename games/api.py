"""What the views of the games API share: error answers, finding a match and the seat.

The archive and lifecycle views (``games.views``) and the play views
(``games.play_views``) both answer the domain errors of ``games.errors`` with the error
body of ``cardserver.api``, look a match up or answer 404, and find the seat a requester
acts for.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.response import Response

from cardserver.api import error_body
from games import errors
from games.models import Match
from games.rows import match_row
from games.selectors import match_decks, match_for_reading
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


def _public_state(match: Match) -> dict | None:
    """Return what anyone may see of the table: everything once the match is over."""
    if match.status == Match.Status.ACTIVE:
        return match_snapshot_refresh(match=match).view(None)
    if match.status == Match.Status.FINISHED:
        return match_snapshot_refresh(match=match).reveal()
    return None


def match_detail(match: Match) -> dict:
    """Return the match's answer in the shape of ``MatchDetailSerializer``."""
    finished = match.status == Match.Status.FINISHED
    context = {
        "state": _public_state(match),
        "decks": match_decks(match) if finished else None,
    }
    return MatchDetailSerializer(match, context=context).data
