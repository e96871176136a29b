"""Actions on accounts: sign up, obtain an API token with a password.

The tokens themselves (made, named, rotated, revoked) are ``accounts.tokens``.

Each action is a function named ``<entity>_<action>`` with keyword-only, typed
arguments, and runs as one transaction.
"""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts.tokens import token_create


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
            _token, key = token_create(user=user)
    except IntegrityError:
        raise SignupError({"username": ["A user with that username already exists."]}) from None
    return user, key


def token_obtain(*, username: str, password: str, name: str = "") -> str | None:
    """Make a new API token for the user and return it (shown this once), or None for bad
    credentials. Tokens are stored hashed, so an earlier one cannot be given again; each
    sign-in makes one (``accounts.tokens.MAX_TOKENS_PER_USER`` at most: ValidationError
    beyond)."""
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        return None
    _token, key = token_create(user=user, name=name or "Signed in with a password")
    return key
