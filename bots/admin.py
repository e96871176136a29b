"""Admin of the bots app. A bot's secret is never shown; rotate it through the API."""

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from bots import services
from bots.models import Bot, BotVersion, Challenge


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "owner",
        "kind",
        "enabled",
        "healthy",
        "consecutive_failures",
        "last_ping_at",
        "last_ping_ok",
    ]
    list_filter = ["kind", "enabled", "healthy", "last_ping_ok", "challenge_policy"]
    search_fields = ["name", "owner__username", "description", "url"]
    list_select_related = ["owner"]
    date_hierarchy = "created_at"
    exclude = ["secret"]
    readonly_fields = [
        "account",
        "consecutive_failures",
        "last_ping_at",
        "last_ping_ok",
        "last_ping_detail",
        "created_at",
        "version",
    ]
    raw_id_fields = ["owner"]
    # A URL typed without a scheme means https (Django 6's default; 5.2 warns otherwise).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    actions = ["enable", "disable", "ping"]

    def view_on_site(self, obj: Bot) -> str:
        return reverse("web:bot", args=[obj.name])

    @admin.action(description="Enable the selected bots")
    def enable(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot_id in queryset.values_list("pk", flat=True):
            services.bot_set_enabled(bot_id=bot_id, enabled=True)
        self.message_user(request, "Enabled.", messages.SUCCESS)

    @admin.action(description="Disable the selected bots")
    def disable(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot_id in queryset.values_list("pk", flat=True):
            services.bot_set_enabled(bot_id=bot_id, enabled=False)
        self.message_user(request, "Disabled.", messages.SUCCESS)

    @admin.action(description="Ping the selected HTTP bots (in the background)")
    def ping(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        from bots.tasks import ping_bot

        bot_ids = list(queryset.filter(kind=Bot.Kind.HTTP).values_list("pk", flat=True))
        for bot_id in bot_ids:
            ping_bot.delay(bot_id)
        self.message_user(
            request, f"Pings queued for {len(bot_ids)} HTTP bot(s).", messages.SUCCESS
        )


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    """Versions start through the API and the pings; the admin only shows them."""

    list_display = ["bot", "label", "reason", "created_at"]
    list_filter = ["reason"]
    search_fields = ["bot__name", "label"]
    list_select_related = ["bot"]
    readonly_fields = ["bot", "label", "reason", "url", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    """Challenges are made and answered through the API (the consent is the bot owner's);
    the admin only shows them."""

    list_display = ["id", "challenger", "bot", "game", "players", "status", "match", "created_at"]
    list_filter = ["status", "game"]
    search_fields = ["bot__name", "challenger__username"]
    list_select_related = ["challenger", "bot"]

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return [f.name for f in Challenge._meta.fields] + ["bots"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
