"""The tournaments and ratings API (the pages are web's).

Anyone may read. Any signed-in user may create an unrated tournament of their own bots
and the built-in ones (``tournaments.creation.tournament_create`` holds the rule);
rated tournaments, which move the leaderboards, are for staff. A tournament's creator
or staff may start and cancel it.
"""

from __future__ import annotations

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from bots.models import Bot
from cardserver.api_errors import error_answer
from cardserver.filters import BooleanFilter
from cardserver.pagination import CheckedCursorPagination
from tournaments import creation, selectors, services
from tournaments.models import Tournament
from tournaments.pools import POOLS
from tournaments.serializers import (
    LeaderboardSerializer,
    RatingHistorySerializer,
    StandingsSerializer,
    TournamentCreateSerializer,
    TournamentSerializer,
)


def tournament_errors_answer() -> None:
    """Answer a tournament that cannot be created or acted on as asked, in any view of
    the API, as a validation error (400) naming why (``TournamentsConfig.ready``)."""
    error_answer(creation.TournamentError, lambda exc: ValidationError([str(exc)]))


def _tournaments():
    return Tournament.objects.select_related("created_by").prefetch_related("entries__bot")


class TournamentFilter(django_filters.FilterSet):
    rated = BooleanFilter()

    class Meta:
        model = Tournament
        fields = ["status", "game", "rated"]


class TournamentListView(generics.ListCreateAPIView):
    """List tournaments, newest first, with their progress; create one."""

    serializer_class = TournamentSerializer
    filterset_class = TournamentFilter

    def get_queryset(self):
        return _tournaments()

    @extend_schema(request=TournamentCreateSerializer, responses={201: TournamentSerializer})
    def post(self, request: Request) -> Response:
        data = TournamentCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        start = options.pop("start")
        if options["rated"] and not request.user.is_staff:
            raise PermissionDenied("Only staff may create rated tournaments.")
        tournament = creation.tournament_create(creator=request.user, **options)
        if start:
            services.tournament_start(tournament_id=tournament.pk)
        tournament = _tournaments().get(pk=tournament.pk)
        return Response(TournamentSerializer(tournament).data, status=status.HTTP_201_CREATED)


class TournamentDetailView(generics.RetrieveAPIView):
    """A tournament with its progress (matches done / total)."""

    serializer_class = TournamentSerializer

    def get_queryset(self):
        return _tournaments()


class _TournamentAction(generics.GenericAPIView):
    serializer_class = TournamentSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self):
        return _tournaments()

    def act(self, tournament_id: int) -> None:
        raise NotImplementedError

    @extend_schema(request=None, responses=TournamentSerializer)
    def post(self, request: Request, pk: int) -> Response:
        tournament = self.get_object()
        if not (request.user.is_staff or tournament.created_by_id == request.user.pk):
            raise PermissionDenied("Only the tournament's creator or staff may do this.")
        self.act(tournament.pk)
        return Response(TournamentSerializer(self.get_queryset().get(pk=pk)).data)


class TournamentStartView(_TournamentAction):
    """Start a tournament that has not started."""

    def act(self, tournament_id: int) -> None:
        services.tournament_start(tournament_id=tournament_id)


class TournamentCancelView(_TournamentAction):
    """Cancel a tournament; its unfinished matches are aborted."""

    def act(self, tournament_id: int) -> None:
        services.tournament_cancel(tournament_id=tournament_id)


def standings_data(tournament: Tournament) -> dict:
    """The standings as ``StandingsSerializer`` describes them, in plain values: the
    crosstable has a cell per pair of entrants (2,450 for fifty bots), and a serializer
    field per value of each costs more than the standings themselves."""
    standings = selectors.tournament_standings(tournament)
    names = {line.bot_id: line.name for line in standings.lines}
    return {
        "standings": [
            {"bot": line.name, "games": line.games, "points": line.points,
             "losses": line.losses, "draws": line.draws}
            for line in standings.lines
        ],
        "crosstable": [
            {
                "bot": line.name,
                "cells": [
                    {"opponent": names[other], "score": score, "games": games}
                    for other, (score, games) in standings.crosstable[line.bot_id].items()
                ],
            }
            for line in standings.lines
        ],
        "decks": [
            {"deck": deck, "scores": {names[b]: points for b, points in scores.items()}}
            for deck, scores in standings.decks.items()
        ],
    }  # fmt: skip


class TournamentStandingsView(generics.GenericAPIView):
    """Points, losses and draws, the crosstable (each pair's score), and scores per deck.

    A pairwise score is 1 for an opponent who lost at the table, 0 for losing, 1/2 for
    the others; a bot's points are the sum of its row.
    """

    serializer_class = StandingsSerializer

    def get_queryset(self):
        return Tournament.objects.all()

    def get(self, request: Request, pk: int) -> Response:
        # The serializer describes the answer (the schema); the values are plain already.
        return Response(standings_data(self.get_object()))


def leaderboard_data(pool: str) -> dict:
    fit, lines = selectors.leaderboard(pool)
    return {
        "pool": pool,
        "fitted_at": fit.fitted_at if fit else None,
        "matches": fit.matches if fit else 0,
        "anchor": fit.anchor.name if fit and fit.anchor else None,
        "anchor_rating": fit.anchor_rating if fit else 0.0,
        "lines": lines,
    }


class LeaderboardView(generics.GenericAPIView):
    """A pool's leaderboard: the batch fit's order with 95% intervals, and live Elo.

    Pools: ``durak-2p``, ``durak-3p``, ``durak-4p``, ``volynshchik``.
    """

    serializer_class = LeaderboardSerializer

    def get(self, request: Request, pool: str) -> Response:
        if pool not in POOLS:
            raise NotFound(f"No rating pool {pool!r}; the pools are {', '.join(POOLS)}.")
        return Response(LeaderboardSerializer(leaderboard_data(pool)).data)


class RatingHistoryPagination(CheckedCursorPagination):
    # Newest first by id, the order changes are applied in, across pools: the (bot, id)
    # index serves it however long the history.
    ordering = ("-id",)
    page_size = 200


class RatingHistoryView(generics.GenericAPIView):
    """A bot's Elo after each rated match, and its fitted rating at each fit, a page at a
    time: the newest 200 changes, oldest first, and the fits of their span; ``next`` is
    the page of older ones (docs/archive-growth.md)."""

    serializer_class = RatingHistorySerializer
    pagination_class = RatingHistoryPagination

    @extend_schema(parameters=[
        OpenApiParameter("pool", str, description="Only this pool's changes and fits."),
        OpenApiParameter("cursor", str, description="A page's cursor: follow `next`."),
    ])  # fmt: skip
    def get(self, request: Request, name: str) -> Response:
        bot = get_object_or_404(Bot, name__iexact=name)
        pool = request.query_params.get("pool")
        paginator = self.paginator
        elo = paginator.paginate_queryset(
            selectors.bot_rating_changes(bot.pk, pool), request, view=self
        )[::-1]
        fits = selectors.bot_rating_page_fits(
            bot.pk, pool, elo, newest=not paginator.has_previous,
            oldest=not paginator.has_next, limit=paginator.page_size,
        )  # fmt: skip
        return Response(RatingHistorySerializer({
            "bot": bot.name, "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(), "elo": elo, "fits": fits,
        }).data)  # fmt: skip
