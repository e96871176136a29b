"""Deck commitments: how a match proves that its cards were fixed before play began.

A match draws a seed with ``secrets`` and publishes, when it starts, a SHA-256 commitment
to it; the seed is revealed when the match ends (a match of a deal group: when the group
unseals). The engine derives every deck from a seed (``cardkit.engine.cards.shuffled_deck``
and ``derive_seed``; the exact derivation is in docs/fairness.md), so anyone can recompute
the decks, check them against the commitment and replay the log.

Exactly what is hashed (``H(x)`` is ``sha256(x.encode("ascii")).hexdigest()``):

- A seeded match: the seed is 64 lowercase hexadecimal characters (32 random bytes from
  ``secrets.token_hex(32)``); the commitment is the lowercase hex SHA-256 digest of those
  64 ASCII characters, with nothing added (no newline)::

      sha256(seed.encode("ascii")).hexdigest()

- A match of a deal group (a ladder table, a duplicate tournament's round, a sequential
  test's pair): the group draws one seed ``G`` as above before its first deal. Deck
  ``n`` of the group is dealt from the seed ``H(f"cardserver-deal:{G}:{n}")``, as a
  seeded match is from its seed. The match ``k`` of the group (``deal_copy``) publishes
  at its start ``H(f"cardserver-group:{G}:{n}:{k}")``: it binds ``G`` before the first
  card, yet no two matches of a group publish the same string, so nothing public links
  them while they are sealed.

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


def deal_seed(group_seed: str, number: int) -> str:
    """Return the seed of deck ``number`` of the group whose seed is ``group_seed``."""
    return _hex(f"cardserver-deal:{group_seed}:{number}")


def group_match_commitment(group_seed: str, number: int, copy: int) -> str:
    """Return the commitment published by match ``copy`` of a group, dealt deck ``number``."""
    return _hex(f"cardserver-group:{group_seed}:{number}:{copy}")


def _hex(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def decks_commitment(decks: list[list[str]]) -> str:
    """Return the public commitment to explicit ``decks``."""
    return hashlib.sha256(json.dumps(decks, separators=(",", ":")).encode("ascii")).hexdigest()


def commitment_matches(commitment: str, *, seed: str = "", decks: list | None = None) -> bool:
    """Return whether ``commitment`` is the commitment to the seed (or, without one, the decks)."""
    expected = seed_commitment(seed) if seed else decks_commitment(decks or [])
    return hmac.compare_digest(expected, commitment)
