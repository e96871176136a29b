"""Actions on accounts: sign up, obtain and revoke an API token.

Each action is a function named ``<entity>_<action>`` with keyword-only, typed
arguments, and runs as one transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class SignupError(ValueError):
    """A sign-up refused; ``errors`` maps a field to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(m for messages in errors.values() for m in messages))
        self.errors = errors


def account_signup(*, username: str, password: str, email: str = "") -> tuple[object, str]:
    """Create a user and its API token; return (user, token key).

    Raise SignupError if the username is taken or the password too weak.
    """
    User = get_user_model()
    candidate = User(username=username, email=email)
    try:
        validate_password(password, user=candidate)
    except ValidationError as exc:
        raise SignupError({"password": list(exc.messages)}) from None
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, email=email, password=password)
            token = Token.objects.create(user=user)
    except IntegrityError:
        raise SignupError({"username": ["A user with that username already exists."]}) from None
    return user, token.key


def token_obtain(*, username: str, password: str) -> str | None:
    """Return the user's API token (created if it has none), or None for bad credentials."""
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        return None
    token, _ = Token.objects.get_or_create(user=user)
    return token.key


def token_revoke(*, user: User) -> bool:
    """Delete the user's API token; return whether there was one.

    The next ``token_obtain`` issues a new key.
    """
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
