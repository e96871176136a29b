"""Admin of matches: browse them, never edit the log or peek at the cards of a match in play.

The seed, the decks and the snapshot of a match that is not finished are hidden here
too: a staff member may also be a player.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Prefetch
from django.urls import reverse
from django.utils.html import format_html

from games.models import Match, Move, Seat

SECRET_FIELDS = ("seed", "decks", "snapshot", "snapshot_ply")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that only the services write: shown here, never added, changed or deleted."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("index", "user", "bot")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = (
        "id", "game", "players", "format", "status", "rated", "ply", "loser", "end_reason",
        "created_at", "finished_at", "seated", "replay",
    )  # fmt: skip
    list_filter = ("game", "status", "format", "rated", "players", "end_reason")
    search_fields = ("=id", "seats__user__username", "seats__bot__name")
    date_hierarchy = "created_at"
    inlines = [SeatInline]
    list_select_related = ("created_by",)

    def get_queryset(self, request):
        seats = Seat.objects.select_related("user", "bot").order_by("index")
        return (
            super()
            .get_queryset(request)
            .defer(*SECRET_FIELDS)
            .prefetch_related(Prefetch("seats", queryset=seats))
        )

    def view_on_site(self, obj: Match) -> str:
        return reverse("web:match", args=[obj.pk])

    @admin.display(description="seats")
    def seated(self, obj: Match) -> str:
        return ", ".join(
            f"{seat.index}: {seat.bot or seat.user or 'open'}" for seat in obj.seats.all()
        )

    @admin.display(description="replay")
    def replay(self, obj: Match) -> str:
        if obj.status not in (Match.Status.ACTIVE, Match.Status.FINISHED):
            return "–"
        label = "replay" if obj.status == Match.Status.FINISHED else "watch"
        return format_html('<a href="{}">{}</a>', reverse("web:match", args=[obj.pk]), label)

    def get_fields(self, request, obj=None):
        fields = [f.name for f in Match._meta.fields if f.name != "id"]
        if obj is None or obj.status != Match.Status.FINISHED:
            fields = [f for f in fields if f not in SECRET_FIELDS]
        return fields

    def get_readonly_fields(self, request, obj=None):
        # Matches change only through games.services; the admin shows them.
        return self.get_fields(request, obj)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Move)
class MoveAdmin(ReadOnlyAdmin):
    """The log is append-only: no add, change or delete, here as anywhere."""

    list_display = ("match", "ply", "seat", "move", "received_at", "time_taken", "replay")
    list_filter = ("match__game",)
    search_fields = ("=match__id",)
    list_select_related = ("match",)
    fields = ("match", "ply", "seat", "move", "received_at", "time_taken", "idempotency_key")
    readonly_fields = fields

    @admin.display(description="replay")
    def replay(self, obj: Move) -> str:
        # The replay's ply N is the table after N moves: this move is ply + 1.
        url = reverse("web:match", args=[obj.match_id]) + f"?ply={obj.ply + 1}"
        return format_html('<a href="{}">after this move</a>', url)


@admin.register(Seat)
class SeatAdmin(ReadOnlyAdmin):
    """Who held which seat: read-only, seats change only through games.services."""

    list_display = ("match", "index", "user", "bot")
    list_filter = ("match__game", "match__status")
    search_fields = ("=match__id", "user__username", "bot__name")
    list_select_related = ("match", "user", "bot")
    fields = ("match", "index", "user", "bot")
    readonly_fields = fields
