"""Values kept encrypted at rest: bot secrets, which the arena must read to sign requests.

The keys are Fernet keys (AES-128-CBC with an HMAC-SHA256, from the ``cryptography``
package) listed in ``BOT_SECRET_KEYS``, newest first: the first encrypts, every one
decrypts (``MultiFernet``), so that a new key can be put in front, the stored values
re-encrypted with it (``manage.py bot_secrets_rotate``), and the old key dropped. Unset,
one key is derived from ``SECRET_KEY``. ``docs/credentials.md`` tells the rotation.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

# One MultiFernet per list of keys: building one costs a key derivation per key.
_CIPHERS: dict[tuple[str, ...], MultiFernet] = {}


class UndecryptableValue(ImproperlyConfigured):
    """A stored value that none of ``BOT_SECRET_KEYS`` decrypts (a key dropped too soon)."""


def derived_key(secret_key: str) -> str:
    """Return the Fernet key used when ``BOT_SECRET_KEYS`` is unset, derived from
    ``secret_key`` (its own purpose string, so it is no other use's key)."""
    digest = hashlib.sha256(b"card-arena bot secrets\0" + secret_key.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()


def cipher() -> MultiFernet:
    """Return the cipher of the configured keys."""
    keys = tuple(settings.BOT_SECRET_KEYS) or (derived_key(settings.SECRET_KEY),)
    found = _CIPHERS.get(keys)
    if found is None:
        try:
            found = MultiFernet([Fernet(key) for key in keys])
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"BOT_SECRET_KEYS holds a key that is not a Fernet key ({exc}); make one "
                "with: python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'"
            ) from None
        found = _CIPHERS.setdefault(keys, found)
    return found


def encrypt(text: str) -> str:
    return cipher().encrypt(text.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return cipher().decrypt(token.encode()).decode()
    except InvalidToken:
        raise UndecryptableValue(
            "A stored secret is not decrypted by any key of BOT_SECRET_KEYS: keep the old "
            "key in the list until `manage.py bot_secrets_rotate` has run."
        ) from None


def reencrypt(token: str) -> str:
    """Return ``token`` encrypted anew with the first key (it may be under any key)."""
    try:
        return cipher().rotate(token.encode()).decode()
    except InvalidToken:
        raise UndecryptableValue(
            "A stored secret is not decrypted by any key of BOT_SECRET_KEYS."
        ) from None


class EncryptedTextField(models.TextField):
    """A text stored encrypted (``encrypt``) and read back in clear; "" stays "".

    Each write encrypts anew (a random IV), so the column cannot be searched or compared:
    filter on other fields.
    """

    def from_db_value(self, value, expression, connection):
        if not value:
            return value
        return decrypt(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if not value:
            return value
        return encrypt(value)
