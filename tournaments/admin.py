"""Admin of tournaments, ratings and the ladder.

A tournament added here goes through ``tournaments.creation.tournament_create`` (which
schedules its matches); the list's actions start and cancel tournaments. The ladder's
rate and the periodic refits are django-celery-beat periodic tasks ("Periodic tasks").
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import OuterRef, Subquery
from django.urls import reverse
from django.utils.html import format_html

from bots.models import Bot
from tournaments import creation, services
from tournaments.models import (
    Entrant,
    FitEntry,
    LadderMatch,
    LadderPause,
    RatedMatch,
    Rating,
    RatingChange,
    RatingFit,
    SequentialPair,
    SequentialTest,
    Tournament,
    TournamentMatch,
)


class RecordAdmin(admin.ModelAdmin):
    """Rows that the services write: every field read-only, none added here."""

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


class TournamentAddForm(forms.ModelForm):
    bots = forms.ModelMultipleChoiceField(
        queryset=Bot.objects.filter(enabled=True), help_text="The entrants."
    )
    candidate = forms.ModelChoiceField(
        queryset=Bot.objects.filter(enabled=True),
        required=False,
        help_text="Gauntlet only: the bot that plays each of the others (it need not be "
        "selected among the entrants too).",
    )

    def clean(self):
        data = super().clean()
        gauntlet = data.get("format") == Tournament.Format.GAUNTLET
        if gauntlet and not data.get("candidate"):
            self.add_error("candidate", "A gauntlet needs its candidate.")
        if data.get("candidate") and not gauntlet:
            self.add_error("candidate", "Only a gauntlet has a candidate.")
        return data

    class Meta:
        model = Tournament
        fields = [
            "name", "game", "players", "deck_size", "match_format", "format",
            "games_per_pairing", "move_time_limit", "rated", "duplicate",
        ]  # fmt: skip


class EntrantInline(admin.TabularInline):
    model = Entrant
    extra = 0
    fields = ["order", "bot"]
    readonly_fields = ["order", "bot"]
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = [
        "name", "game", "players", "format", "games_per_pairing", "rated", "duplicate",
        "status", "progress", "created_at",
    ]  # fmt: skip
    list_filter = ["status", "game", "rated", "duplicate"]
    search_fields = ["name"]
    actions = ["start", "cancel"]
    inlines = [EntrantInline]
    readonly_fields = [
        "status", "progress", "current_round", "rounds_total", "matches_total",
        "matches_done", "seed", "created_by", "created_at", "started_at", "finished_at",
    ]  # fmt: skip

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = TournamentAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return [f.name for f in Tournament._meta.fields if f.name != "name"] + ["progress"]

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def save_model(self, request, obj, form, change) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        data = form.cleaned_data
        try:
            tournament = creation.tournament_create(
                creator=request.user,
                bots=list(data["bots"]),
                candidate=data.get("candidate"),
                **{name: data[name] for name in TournamentAddForm.Meta.fields},
            )
        except creation.TournamentError as exc:
            # Too late for a form error: the admin saves after validating.
            messages.error(request, f"Not created: {exc}")
            obj.pk = None
            return
        obj.pk = tournament.pk
        obj.__dict__.update(
            {f.attname: getattr(tournament, f.attname) for f in Tournament._meta.concrete_fields}
        )

    def save_related(self, request, form, formsets, change) -> None:
        if change:
            super().save_related(request, form, formsets, change)

    def response_add(self, request, obj, post_url_continue=None):
        if obj.pk is None:
            from django.http import HttpResponseRedirect

            return HttpResponseRedirect(request.path)
        return super().response_add(request, obj, post_url_continue)

    def view_on_site(self, obj: Tournament) -> str:
        return reverse("web:tournament", args=[obj.pk])

    @admin.display(description="Matches done")
    def progress(self, tournament: Tournament) -> str:
        percent = 100 * tournament.matches_done // max(tournament.matches_total, 1)
        return format_html(
            "{} / {} ({}%)", tournament.matches_done, tournament.matches_total, percent
        )

    @admin.action(description="Start the selected tournaments")
    def start(self, request, queryset) -> None:
        for tournament in queryset:
            try:
                services.tournament_start(tournament_id=tournament.pk)
            except creation.TournamentError as exc:
                messages.warning(request, f"{tournament}: {exc}")
            else:
                messages.success(request, f"{tournament}: started")

    @admin.action(description="Cancel the selected tournaments")
    def cancel(self, request, queryset) -> None:
        for tournament in queryset:
            services.tournament_cancel(tournament_id=tournament.pk)
        messages.success(request, f"Cancelled {queryset.count()} tournament(s).")


@admin.register(TournamentMatch)
class TournamentMatchAdmin(RecordAdmin):
    list_display = ["tournament", "index", "round", "table", "deck", "status", "attempts", "match"]
    list_filter = ["status"]
    search_fields = ["tournament__name"]
    raw_id_fields = ["tournament", "match"]


@admin.register(Rating)
class RatingAdmin(RecordAdmin):
    """Live Elo beside the pool's latest fitted rating and its interval, as the site shows."""

    list_display = [
        "bot", "pool", "fitted", "elo_rounded", "games", "losses", "draws", "updated_at"
    ]  # fmt: skip
    list_filter = ["pool"]
    search_fields = ["bot__name"]
    list_select_related = ["bot"]

    def get_queryset(self, request):
        # The pool's newest fit, and this bot's line in it, in the list's one query.
        newest_fit = RatingFit.objects.filter(pool=OuterRef(OuterRef("pool"))).order_by(
            "-fitted_at", "-id"
        )
        line = FitEntry.objects.filter(
            fit_id=Subquery(newest_fit.values("pk")[:1]), bot_id=OuterRef("bot_id")
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                fit_rating=Subquery(line.values("rating")[:1]),
                fit_low=Subquery(line.values("low")[:1]),
                fit_high=Subquery(line.values("high")[:1]),
            )
        )

    @admin.display(description="Elo", ordering="elo")
    def elo_rounded(self, rating: Rating) -> str:
        return f"{rating.elo:.0f}"

    @admin.display(description="fitted rating (95%)", ordering="fit_rating")
    def fitted(self, rating: Rating) -> str:
        if getattr(rating, "fit_rating", None) is None:
            return "–"
        return f"{rating.fit_rating:.0f} ({rating.fit_low:.0f}–{rating.fit_high:.0f})"


@admin.register(RatedMatch)
class RatedMatchAdmin(RecordAdmin):
    list_display = ["pool", "sequence", "match", "loser_bot", "applied_at"]
    list_filter = ["pool"]


@admin.register(RatingChange)
class RatingChangeAdmin(RecordAdmin):
    list_display = ["bot", "pool", "sequence", "match", "elo_before", "elo_after", "lost"]
    list_filter = ["pool"]
    search_fields = ["bot__name"]

    @admin.display(description="before", ordering="before")
    def elo_before(self, change: RatingChange) -> str:
        return f"{change.before:.1f}"

    @admin.display(description="after", ordering="after")
    def elo_after(self, change: RatingChange) -> str:
        return f"{change.after:.1f}"


class FitEntryInline(admin.TabularInline):
    model = FitEntry
    extra = 0
    can_delete = False
    readonly_fields = [
        "rank", "bot", "rating", "low", "high", "los", "games", "losses", "provisional"
    ]  # fmt: skip
    fields = readonly_fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(RatingFit)
class RatingFitAdmin(RecordAdmin):
    list_display = ["pool", "fitted_at", "matches", "bootstraps", "anchor", "seconds"]
    list_filter = ["pool"]
    inlines = [FitEntryInline]


@admin.register(LadderMatch)
class LadderMatchAdmin(admin.ModelAdmin):
    list_display = ["match", "pool", "created_at"]
    list_filter = ["pool"]
    raw_id_fields = ["match"]


@admin.register(LadderPause)
class LadderPauseAdmin(admin.ModelAdmin):
    """Delete a pause to let the bot back on the ladder."""

    list_display = ["bot", "reason", "paused_at"]
    raw_id_fields = ["bot"]


@admin.register(SequentialTest)
class SequentialTestAdmin(RecordAdmin):
    """Tests start through the API or ``manage.py sprt``; the admin shows them."""

    list_display = ["id", "candidate", "baseline", "game", "players", "mode", "status",
                    "llr", "pairs_done", "created_at"]  # fmt: skip
    list_filter = ["status", "mode", "game"]
    list_select_related = ["candidate", "baseline"]
    exclude = ["seed"]


@admin.register(SequentialPair)
class SequentialPairAdmin(RecordAdmin):
    list_display = ["test", "index", "deck", "seat", "status", "outcome", "first", "second"]
    list_filter = ["status"]
