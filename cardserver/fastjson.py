"""orjson where it reads (and writes) JSON exactly as the standard library does, and only
there.

orjson decodes a match's snapshot (the JSON of the engine state, read on every request of
play) in less than half the time of ``json.loads`` and to the same values, with one
exception: an integer beyond 64 bits, which ``json`` keeps exact, orjson makes a float.
``loads`` therefore looks for 19 digits in a row first (a few microseconds: the text's
bytes with every digit made ``0`` and everything else a space) and leaves such text,
like anything orjson refuses, to the caller's own decoder.

``dumps`` writes what ``json.dumps`` writes the value as (compact, and UTF-8 rather than
escaped characters: the same JSON value) in a fraction of the time: the engine's snapshot and
the move of every turn are written through it (``cardserver.postgresql``). What orjson
would write otherwise or refuse (a subclass of a builtin, a dataclass, a datetime, a
number beyond 64 bits, a key that is not a string) is left to ``json.dumps``, errors
included. One difference remains: NaN and the infinities, which json writes as ``NaN``
(not JSON: PostgreSQL refuses the row), orjson writes as ``null``.
"""

from __future__ import annotations

import json

import orjson

# Every digit to b"0", every other byte to b" ": 19 digits in a row become b"0" * 19.
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_NUMBER = b"0" * 19


class Unsure(ValueError):
    """orjson might not read this text as ``json.loads`` does: use ``json``."""


def loads(data: str | bytes):
    """Return the value of the JSON ``data`` as ``json.loads`` would give it.

    Raise ``Unsure`` where orjson's answer could differ from ``json``'s (a number of 19
    digits or more, text that is not valid UTF-8 or that orjson refuses): the caller then
    decodes as it would have without this module, errors included.
    """
    if isinstance(data, str):
        try:
            data = data.encode()
        except UnicodeEncodeError:
            raise Unsure from None
    if _LONG_NUMBER in data.translate(_DIGITS):
        raise Unsure
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise Unsure from None


# Subclasses of builtins, dataclasses and datetimes go to ``_refuse`` and so to json, to be
# written or refused as json would. (orjson writes a UUID and a plain enum member, which
# json refuses: a value no column of the arena holds.)
_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME
_OPTIONS |= orjson.OPT_PASSTHROUGH_DATACLASS


def _refuse(value):
    raise TypeError(type(value).__name__)


def dumps(value) -> bytes | str:
    """The JSON of ``value`` as ``json.dumps(value)`` gives it (bytes from orjson, or the
    str of ``json.dumps`` for a value orjson might write otherwise)."""
    try:
        data = orjson.dumps(value, default=_refuse, option=_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value)
    return data



def loads_or_json(data: bytes):
    """``loads``, or ``json.loads`` where orjson is unsure: a bot's answer, whose errors
    (ValueError, RecursionError) are json's."""
    try:
        return loads(data)
    except Unsure:
        return json.loads(data)


def dumps_compact(value) -> bytes:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()``, written by
    orjson where it writes the same bytes: a bot's request."""
    data = dumps(value)
    if isinstance(data, bytes):
        return data
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
