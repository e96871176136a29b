"""orjson where it reads JSON exactly as the standard library does, and only there.

orjson decodes a match's snapshot (the JSON of the engine state, read on every request of
play) in less than half the time of ``json.loads`` and to the same values, with one
exception: an integer beyond 64 bits, which ``json`` keeps exact, orjson makes a float.
``loads`` therefore looks for 19 digits in a row first (a few microseconds: the text's
bytes with every digit made ``0`` and everything else a space) and leaves such text,
like anything orjson refuses, to the caller's own decoder.
"""

from __future__ import annotations

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
