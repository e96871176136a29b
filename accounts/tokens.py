"""API tokens: made, named, rotated and revoked; stored only as their SHA-256.

A token is ``cat_`` and 43 random URL-safe characters (256 bits), shown once when made.
The database keeps its hash and its first characters: a token so random needs no slow
hash (nobody can guess one to try against the hashes), and a plain SHA-256 keeps the
lookup of every API request one indexed equality (``accounts.authentication``), as
GitHub does. The ``cat_`` prefix lets secret scanners and people recognise one.

Each action is one transaction; who may act is the caller's business (the API and the
site let a user act on their own tokens only).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiToken

if TYPE_CHECKING:
    from django.contrib.auth.models import User

TOKEN_PREFIX = "cat_"
# Characters of a token kept to tell it apart in listings (the prefix and 4 random ones).
SHOWN_CHARACTERS = 8
# Tokens one user may hold at once: a script that signs in at every run must revoke.
MAX_TOKENS_PER_USER = 50
DEFAULT_NAME = "API token"


def token_hash(key: str) -> str:
    """Return the stored form of a token: its lowercase hex SHA-256."""
    return hashlib.sha256(key.encode()).hexdigest()


def _token_new() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        return DEFAULT_NAME
    if len(name) > ApiToken._meta.get_field("name").max_length:
        raise ValidationError({"name": ["A token's name is at most 60 characters."]})
    return name


def token_create(*, user: User, name: str = DEFAULT_NAME) -> tuple[ApiToken, str]:
    """Make a token for ``user``; return it and the token itself, shown this once.

    Raise ValidationError when the name is too long or the user holds
    ``MAX_TOKENS_PER_USER`` tokens already.
    """
    name = _clean_name(name)
    key = _token_new()
    with transaction.atomic():
        # The user's row serialises two creations at once, so the cap holds.
        get_user_model().objects.select_for_update().filter(pk=user.pk).exists()
        if ApiToken.objects.filter(user=user).count() >= MAX_TOKENS_PER_USER:
            raise ValidationError(
                {"name": [f"You hold {MAX_TOKENS_PER_USER} tokens, the most allowed: revoke "
                          "one you no longer use."]}
            )  # fmt: skip
        token = ApiToken.objects.create(
            user=user, name=name, key_hash=token_hash(key), prefix=key[:SHOWN_CHARACTERS],
            created_at=timezone.now(),
        )  # fmt: skip
    return token, key


def token_rename(*, token_id: int, name: str) -> ApiToken:
    """Give the token a new name; return it."""
    name = _clean_name(name)
    with transaction.atomic():
        ApiToken.objects.filter(pk=token_id).update(name=name)
    return ApiToken.objects.get(pk=token_id)


def token_revoke(*, token_id: int) -> bool:
    """Delete the token (it stops working at once); return whether it existed."""
    with transaction.atomic():
        deleted, _ = ApiToken.objects.filter(pk=token_id).delete()
    return bool(deleted)


def token_rotate(*, token_id: int) -> tuple[ApiToken, str]:
    """Replace the token's secret part, keeping its name and row: the old token stops
    working at once. Return the token and the new token itself, shown this once.

    Raise ApiToken.DoesNotExist if it was revoked meanwhile.
    """
    key = _token_new()
    with transaction.atomic():
        updated = ApiToken.objects.filter(pk=token_id).update(
            key_hash=token_hash(key), prefix=key[:SHOWN_CHARACTERS], created_at=timezone.now()
        )
        if not updated:
            raise ApiToken.DoesNotExist(f"token {token_id} does not exist")
    return ApiToken.objects.get(pk=token_id), key


def tokens_revoke_all(*, user_id: int) -> int:
    """Delete every token of the user; return how many."""
    with transaction.atomic():
        deleted, _ = ApiToken.objects.filter(user_id=user_id).delete()
    return deleted

