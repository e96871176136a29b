"""Admin of the bots app. A bot's secret is never shown; rotate it through the API."""

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from bots import services
from bots.models import Bot, BotVersion


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
    list_filter = ["kind", "enabled", "healthy", "last_ping_ok"]
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
