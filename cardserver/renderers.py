"""DRF's JSON renderer and parser, through orjson where that gives the same JSON.

The endpoints of play (``GET .../me/``, ``GET .../wait/``, ``POST .../moves/``) answer
and read small JSON documents many times a second; orjson encodes and decodes them in a
fraction of the time of the standard library. The output is DRF's ``JSONRenderer``'s
(compact, UTF-8, datetimes in ISO 8601 with ``Z`` for UTC, U+2028 and U+2029 escaped);
what orjson cannot encode or decode exactly as the standard library does (integers
beyond 64 bits, ``indent=`` asked for in ``Accept``, text that is not valid JSON) goes to
DRF's own code, so the answers and the errors stay DRF's.

Numbers are the same numbers; a float that needs an exponent may be written differently
(``1e16`` rather than ``1e+16``).
"""

from __future__ import annotations

import io

import orjson
from rest_framework import exceptions, parsers, renderers
from rest_framework.utils.encoders import JSONEncoder

from cardserver import fastjson

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS
# What orjson does not know how to encode (lazy strings, Decimal, timedelta, ...), DRF's
# encoder turns into something it does, as it would for the standard library.
_default = JSONEncoder().default


class JSONRenderer(renderers.JSONRenderer):
    """DRF's ``JSONRenderer``, encoding with orjson when no indentation is asked for."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.get_indent(accepted_media_type, renderer_context or {}) is None:
            try:
                content = orjson.dumps(data, default=_default, option=_OPTIONS)
            except (orjson.JSONEncodeError, TypeError, ValueError):
                pass
            else:
                # Escaped as DRF does, so that the JSON is also valid JavaScript.
                if b"\xe2\x80\xa8" in content or b"\xe2\x80\xa9" in content:
                    content = content.replace(b"\xe2\x80\xa8", b"\\u2028").replace(
                        b"\xe2\x80\xa9", b"\\u2029"
                    )
                return content
        return super().render(data, accepted_media_type, renderer_context)


# Arrays and objects one inside another that a request body may have. The deepest real
# request (a match created with its seats, a move with its cards) has 3; a body nested a
# thousand deep would exhaust Python's stack in the parser or in any code that walks it.
MAX_JSON_DEPTH = 32


class JSONParser(parsers.JSONParser):
    """DRF's ``JSONParser``, decoding UTF-8 bodies with ``cardserver.fastjson``, that
    refuses JSON nested deeper than ``MAX_JSON_DEPTH`` (400 ``invalid``, saying so).

    A body it is unsure of (not JSON, NaN or Infinity, a byte order mark, 19 digits in a
    row, ...) is parsed by DRF's parser, which accepts or refuses it with its own error.
    """

    renderer_class = JSONRenderer

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = self._parse(stream, media_type, parser_context)
        except RecursionError:
            data = None
            too_deep = True
        else:
            too_deep = _deeper_than(data, MAX_JSON_DEPTH)
        if too_deep:
            raise exceptions.ParseError(
                f"The JSON of the request body is nested more than {MAX_JSON_DEPTH} arrays "
                "or objects deep.",
                code="invalid",
            )
        return data

    def _parse(self, stream, media_type, parser_context):
        if parsers.get_encoding(parser_context or {}).lower().replace("_", "-") in (
            "utf-8",
            "utf8",
        ):
            body = stream.read()
            try:
                return fastjson.loads(body)
            except fastjson.Unsure:
                stream = io.BytesIO(body)
        return super().parse(stream, media_type, parser_context)


def _deeper_than(value, limit: int) -> bool:
    """Whether ``value`` has arrays or objects nested more than ``limit`` deep (no recursion)."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
