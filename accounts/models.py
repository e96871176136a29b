"""API tokens, stored as the SHA-256 of the token: a copy of the table signs nobody in."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """One named API token of a user. The token itself is shown once, when made; only its
    hash is kept (``accounts.tokens``), and its first characters to tell tokens apart."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=60)
    # Lowercase hex SHA-256 of the whole token; the unique index makes the lookup of every
    # API request one indexed query.
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, help_text="The token's first characters.")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["user", "created_at", "id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}...)"
