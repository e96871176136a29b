"""Filters of the match archive (``GET /api/v1/matches/``)."""

from __future__ import annotations

from datetime import UTC

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Q
from django_filters.fields import IsoDateTimeField

from cardserver.filters import BooleanFilter, IntegerFilter
from games.models import Match, Seat


class UTCDateTimeField(IsoDateTimeField):
    """An ISO 8601 date-time, converted to UTC.

    PostgreSQL refuses offsets beyond +-15:59 that Python reads (``+20:31``); in UTC
    every date-time is one it takes. A date-time that is out of range in UTC is invalid.
    """

    def to_python(self, value):
        value = super().to_python(value)
        if value is None or value.tzinfo is None:
            return value
        try:
            return value.astimezone(UTC)
        except OverflowError:
            raise ValidationError("The date-time is out of range.", code="invalid") from None


class UTCDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCDateTimeField


class MatchFilter(django_filters.FilterSet):
    game = django_filters.ChoiceFilter(choices=Match.Game.choices)
    format = django_filters.ChoiceFilter(choices=Match.Format.choices)
    status = django_filters.ChoiceFilter(choices=Match.Status.choices)
    players = IntegerFilter()
    rated = BooleanFilter()
    user = django_filters.CharFilter(
        method="filter_user", label="Username of a player (directly or through a client bot)."
    )
    bot = django_filters.CharFilter(
        method="filter_bot", label="A bot's name or id; `name@label` for one of its versions."
    )
    opponent = django_filters.CharFilter(
        method="filter_bot",
        label="A second bot's name or id: with `bot`, the matches in which both played.",
    )
    loser = IntegerFilter(label="Seat index of the loser.")
    result = django_filters.ChoiceFilter(
        method="filter_result",
        choices=[("decided", "decided"), ("drawn", "drawn")],
        label="decided: a finished match with a loser; drawn: finished without one.",
    )
    end_reason = django_filters.CharFilter(
        label="loser, both_out, repetition, move_limit, timeout, forfeit, resign, cancelled."
    )
    created_after = UTCDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = UTCDateTimeFilter(field_name="created_at", lookup_expr="lt")
    finished_after = UTCDateTimeFilter(field_name="finished_at", lookup_expr="gte")
    finished_before = UTCDateTimeFilter(field_name="finished_at", lookup_expr="lt")

    class Meta:
        model = Match
        fields: list[str] = []

    def filter_user(self, queryset, name, value):
        return self._with_seat(queryset, Q(user__username=value) | Q(bot__account__username=value))

    def filter_bot(self, queryset, name, value):
        value, _, label = value.partition("@")
        named = Q(name=value)
        if value.isdigit():
            named |= Q(pk=int(value))
        # The bot's id, looked up first: the plan of the archive's query is made for this
        # bot (a busy one walks the newest matches, a quiet one its own seats), where a
        # join on the name would be planned for an average bot.
        bots = Seat._meta.get_field("bot").related_model.objects.filter(named)
        ids = list(bots.values_list("pk", flat=True))
        condition = Q(bot_id__in=ids)
        if label:
            # bot@label: the seats that version played.
            condition &= Q(bot_version__label=label)
        return self._with_seat(queryset, condition)

    @staticmethod
    def _with_seat(queryset, condition: Q):
        # A subquery, not a join: a match with two matching seats is listed once.
        return queryset.filter(pk__in=Seat.objects.filter(condition).values("match_id"))

    def filter_result(self, queryset, name, value):
        finished = queryset.filter(status=Match.Status.FINISHED)
        if value == "drawn":
            return finished.filter(loser__isnull=True)
        return finished.filter(loser__isnull=False)
