"""Admin of API tokens: names and first characters only; the tokens are not stored."""

from django.contrib import admin

from accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "user", "created_at"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["name", "prefix", "user", "created_at"]
    exclude = ["key_hash"]

    def has_add_permission(self, request) -> bool:
        # A token made here could not be shown to anyone: users make their own.
        return False
