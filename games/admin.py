"""Admin of matches: browse them, never edit the log or peek at the cards of a match in play.

The seed, the decks and the snapshot of a match that is not finished, or is sealed
(``games.reading``), are hidden here too: a staff member may also be a player. So is the
seed of a deal group until it unseals.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Prefetch
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from games.models import DealGroup, Match, Move, PairRecord, Seat, VersionRecord
from games.reading import match_reading
from games.selectors import matches_stalled

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


class ProgressFilter(admin.SimpleListFilter):
    """The matches in play that stopped moving (``games.selectors.matches_stalled``), the
    ones the health check counts."""

    title = "progress"
    parameter_name = "progress"

    def lookups(self, request, model_admin):
        return [("stalled", "stalled (no move past the deadline)")]

    def queryset(self, request, queryset):
        if self.value() == "stalled":
            stalled = matches_stalled(now=timezone.now()).values("pk")
            return queryset.filter(pk__in=stalled).order_by("turn_started_at")
        return queryset


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    # Compact rows: the key columns fit a 1366 px screen (format, loser and end reason
    # read as one "result"; created and finished as one "when").
    list_display = ("id", "kind", "status", "rated", "ply", "result", "seated", "when", "replay")
    list_filter = (ProgressFilter, "game", "status", "format", "rated", "players", "end_reason")
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

    @admin.display(description="game", ordering="game")
    def kind(self, obj: Match) -> str:
        series = " series" if obj.format == Match.Format.FOOL else ""
        return f"{obj.get_game_display()} {obj.players}p{series}"

    @admin.display(description="result", ordering="end_reason")
    def result(self, obj: Match) -> str:
        if obj.status != Match.Status.FINISHED:
            return "–"
        if obj.loser is None:
            return f"draw ({obj.end_reason})"
        return f"seat {obj.loser} lost ({obj.end_reason})"

    @admin.display(description="when", ordering="created_at")
    def when(self, obj: Match):
        return obj.finished_at or obj.created_at

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
        if obj is None or not match_reading(obj).complete:
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
    fields = (
        "match", "ply", "seat", "move", "comment", "received_at", "time_taken", "idempotency_key",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        # A sealed match's log would show its group's deck (games.reading).
        return super().get_queryset(request).exclude(match__sealed=True)

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


@admin.register(DealGroup)
class DealGroupAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "key", "size", "abandoned", "created_at", "unsealed_at"]
    list_filter = ["kind", "abandoned"]
    search_fields = ["key"]

    def get_fields(self, request, obj=None):
        fields = ["kind", "key", "commitment", "size", "abandoned", "created_at", "unsealed_at"]
        return fields + (["seed"] if obj is not None and obj.unsealed_at else [])


@admin.register(PairRecord)
class PairRecordAdmin(ReadOnlyAdmin):
    """Head-to-head records kept as matches finish (``games.records``; rebuilt by
    ``manage.py rebuild_records``)."""

    list_display = ("bot", "version", "opponent", "game", "players", "games", "wins", "losses",
                    "draws", "timeouts", "crashes", "illegal", "resigned")  # fmt: skip
    list_filter = ("game", "players")
    list_select_related = ("bot", "version", "opponent")
    search_fields = ("bot__name", "opponent__name")


@admin.register(VersionRecord)
class VersionRecordAdmin(ReadOnlyAdmin):
    """Each version's games, losses and forfeits, kept as matches finish."""

    list_display = ("bot", "version", "games", "losses", "forfeits")
    list_select_related = ("bot", "version")
    search_fields = ("bot__name",)
