"""The tournaments and ratings API (the pages are web's).

Anyone may read. Any signed-in user may create an unrated tournament of their own bots
and the built-in ones (``tournaments.services.tournament_create`` holds the rule);
rated tournaments, which move the leaderboards, are for staff. A tournament's creator
or staff may start and cancel it.
"""

from __future__ import annotations

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, permissions, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from bots.models import Bot
from cardserver.filters import BooleanFilter
from tournaments import selectors, services
from tournaments.models import Tournament
from tournaments.pools import POOLS
from tournaments.serializers import (
    LeaderboardSerializer,
    RatingHistorySerializer,
    StandingsSerializer,
    TournamentCreateSerializer,
    TournamentSerializer,
)


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
        try:
            tournament = services.tournament_create(creator=request.user, **options)
            if start:
                services.tournament_start(tournament_id=tournament.pk)
        except services.TournamentError as exc:
            raise ValidationError([str(exc)]) from None
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
        try:
            self.act(tournament.pk)
        except services.TournamentError as exc:
            raise ValidationError([str(exc)]) from None
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
    standings = selectors.tournament_standings(tournament)
    names = {line.bot_id: line.name for line in standings.lines}
    return {
        "standings": standings.lines,
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
    }


class TournamentStandingsView(generics.GenericAPIView):
    """Points, losses and draws, the crosstable (each pair's score), and scores per deck.

    A pairwise score is 1 for an opponent who lost at the table, 0 for losing, 1/2 for
    the others; a bot's points are the sum of its row.
    """

    serializer_class = StandingsSerializer

    def get_queryset(self):
        return Tournament.objects.all()

    def get(self, request: Request, pk: int) -> Response:
        return Response(StandingsSerializer(standings_data(self.get_object())).data)


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


class RatingHistoryView(generics.GenericAPIView):
    """A bot's Elo after each rated match, and its fitted rating at each fit."""

    serializer_class = RatingHistorySerializer

    def get(self, request: Request, name: str) -> Response:
        bot = get_object_or_404(Bot, name__iexact=name)
        history = selectors.bot_rating_history(bot.pk, request.query_params.get("pool"))
        return Response(RatingHistorySerializer({"bot": bot.name, **history}).data)
