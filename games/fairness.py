"""Deck commitments: how a match proves that its cards were fixed before play began.

A rated match draws a seed with ``secrets`` and publishes, when it starts, the SHA-256 of
the seed; the seed itself is revealed when the match ends. The engine derives every deck
from the seed (``games.engine.cards.shuffled_deck`` and ``derive_seed``; the exact
derivation is in docs/rules-decisions.md), so anyone can recompute the decks, check them
against the commitment and replay the log.

Exactly what is hashed:

- A seeded match: the seed is 64 lowercase hexadecimal characters (32 random bytes from
  ``secrets.token_hex(32)``); the commitment is the lowercase hex SHA-256 digest of those
  64 ASCII characters, with nothing added (no newline)::

      sha256(seed.encode("ascii")).hexdigest()

- A practice match dealt from decks its creator chose: the commitment is the SHA-256 of
  the decks as compact JSON, a list of decks, each a list of card strings, top card
  first, with ``,`` and ``:`` as separators and no spaces::

      sha256(json.dumps(decks, separators=(",", ":")).encode("ascii")).hexdigest()

No Django here: a bot author can copy this module to check a match on their own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

SEED_BYTES = 32


def new_seed() -> str:
    """Return a fresh secret seed: 64 lowercase hex characters."""
    return secrets.token_hex(SEED_BYTES)


def seed_commitment(seed: str) -> str:
    """Return the public commitment to ``seed``."""
    return hashlib.sha256(seed.encode("ascii")).hexdigest()


def decks_commitment(decks: list[list[str]]) -> str:
    """Return the public commitment to explicit ``decks``."""
    return hashlib.sha256(json.dumps(decks, separators=(",", ":")).encode("ascii")).hexdigest()


def commitment_matches(commitment: str, *, seed: str = "", decks: list | None = None) -> bool:
    """Return whether ``commitment`` is the commitment to the seed (or, without one, the decks)."""
    expected = seed_commitment(seed) if seed else decks_commitment(decks or [])
    return hmac.compare_digest(expected, commitment)
