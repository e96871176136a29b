"""Token authentication in one precompiled, indexed query on the token's hash.

Tokens are stored as their SHA-256 (``accounts.tokens``): the key sent in
``Authorization: Token <key>`` is hashed and looked up with its user in one ``RowQuery``
(building the ORM's SQL would cost more CPU than the database spends answering).
Errors are DRF's own ("Invalid token.", "User inactive or deleted."); ``request.auth`` is
the ``ApiToken``, with only its id (enough to revoke it).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from accounts.models import ApiToken
from accounts.tokens import token_hash
from cardserver.sql import RowQuery


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, as DRF's, against hashed tokens."""

    model = ApiToken
    _query: RowQuery | None = None

    @classmethod
    def _user_of_token(cls) -> RowQuery:
        if cls._query is None:
            cls._query = RowQuery(
                get_user_model(),
                f"JOIN {ApiToken._meta.db_table} t ON t.user_id = {{table}}.id "
                "WHERE t.key_hash = %s",
                # What requests read of their user; the rest (password hash, names, dates)
                # is loaded only if something asks for it.
                only=("id", "username", "email", "is_active", "is_staff", "is_superuser"),
                annotations={"token_id": "t.id"},
            )
        return cls._query

    def authenticate_credentials(self, key):
        user = self._user_of_token().one([token_hash(key)])
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token = ApiToken(pk=user.__dict__.pop("token_id"), user_id=user.pk)
        return user, token
