"""Reads of accounts that several views share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accounts.models import ApiToken

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def token_list(*, user: User) -> list[ApiToken]:
    """Return the user's tokens, oldest first."""
    return list(ApiToken.objects.filter(user=user).order_by("created_at", "id"))


def token_of_user(*, user: User, token_id: int) -> ApiToken | None:
    """Return the user's token of that id, or None (another user's token is none)."""
    return ApiToken.objects.filter(user=user, pk=token_id).first()
