"""Admin of matches: browse them, never edit the log or peek at the cards of a match in play.

The seed, the decks and the snapshot of a match that is not finished are hidden here
too: a staff member may also be a player.
"""

from __future__ import annotations

from django.contrib import admin

from games.models import Match, Move, Seat

SECRET_FIELDS = ("seed", "decks", "snapshot", "snapshot_ply")


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
        "created_at", "finished_at",
    )  # fmt: skip
    list_filter = ("game", "status", "format", "rated", "players", "end_reason")
    search_fields = ("=id", "seats__user__username", "seats__bot__name")
    date_hierarchy = "created_at"
    inlines = [SeatInline]
    list_select_related = ("created_by",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*SECRET_FIELDS)

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
class MoveAdmin(admin.ModelAdmin):
    """The log is append-only: no add, change or delete, here as anywhere."""

    list_display = ("match", "ply", "seat", "move", "received_at", "time_taken")
    list_filter = ("match__game",)
    search_fields = ("=match__id",)
    list_select_related = ("match",)
    fields = ("match", "ply", "seat", "move", "received_at", "time_taken", "idempotency_key")
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
