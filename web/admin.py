"""Read-only admin pages for the models no app registered, so that every model of the
arena can be looked at in the admin. None of them is edited by hand: each one is written
by its app's services."""

from __future__ import annotations

from django.contrib import admin

from bots.models import BotTurnLease
from games.admin import ReadOnlyAdmin
from tournaments.admin import RecordAdmin
from tournaments.models import Entrant, FitEntry, RatingPool


class AllFieldsAdmin(RecordAdmin, ReadOnlyAdmin):
    """Every field shown read-only; no row added, changed or deleted here."""


@admin.register(Entrant)
class EntrantAdmin(AllFieldsAdmin):
    list_display = ("tournament", "order", "bot")
    list_filter = ("tournament__status", "tournament__game")
    search_fields = ("tournament__name", "bot__name")
    list_select_related = ("tournament", "bot")


@admin.register(FitEntry)
class FitEntryAdmin(AllFieldsAdmin):
    """A bot's line in each batch fit: the leaderboard order of each fit, per pool."""

    list_display = ("fit", "rank", "bot", "rating", "low", "high", "games", "provisional")
    list_filter = ("fit__pool", "provisional")
    search_fields = ("bot__name",)
    list_select_related = ("fit", "bot")
    ordering = ("fit__pool", "-fit__fitted_at", "rank")


@admin.register(RatingPool)
class RatingPoolAdmin(AllFieldsAdmin):
    list_display = ("key", "matches_applied")


@admin.register(BotTurnLease)
class BotTurnLeaseAdmin(AllFieldsAdmin):
    list_display = ("match", "ply", "expires_at")
    search_fields = ("=match__id",)
