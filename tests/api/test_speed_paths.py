"""The shortcuts of the play endpoints answer exactly as the general code they skip.

A playing client's requests take faster paths (docs/matches-api.md, "Speed"): Django's
session, authentication and message middleware passed over for API requests without a
cookie, orjson for the JSON of the play endpoints and of the match row, a move body
checked without a serializer. Each is held here to the answers of the code it stands in
for.
"""

from __future__ import annotations

import datetime
import io
import json
from decimal import Decimal

import pytest
from django.contrib.sessions.middleware import SessionMiddleware
from django.utils.translation import gettext_lazy
from rest_framework import parsers as drf_parsers
from rest_framework import renderers as drf_renderers
from rest_framework import serializers
from rest_framework.test import APIClient

from cardserver.renderers import JSONParser, JSONRenderer
from cardserver.sql import _fast_json
from games.models import Match
from games.player_views import _move_request
from games.rows import match_row
from games.serializers import MoveSubmitSerializer
from tests.matches import play_random_moves

UTC = datetime.UTC
ATTACK_8S = {"type": "attack", "cards": ["8S"]}


# --- JSON -------------------------------------------------------------------------------

RENDERED = [
    {"a": 1, "b": [1, 2.5, -0.125, None, True, False], "c": "héllo ✓ «»", "d": {"e": {}}},
    {
        "aware": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "micro": datetime.datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=UTC),
        "naive": datetime.datetime(2026, 1, 2, 3, 4, 5),
        "offset": datetime.datetime(
            2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=3))
        ),
        "date": datetime.date(2026, 1, 2),
    },
    {"separators": "a\u2028b\u2029c"},
    {"lazy": gettext_lazy("Not found."), "decimal": Decimal("1.5"), "tuple": (1, 2)},
    {"big": 2**70, "small": -(2**63)},
    {1: "an int key", "error": serializers.ErrorDetail("Bad.", code="invalid")},
    [1, "two", [3]],
    "a string",
    None,
]


@pytest.mark.parametrize("data", RENDERED)
@pytest.mark.parametrize("media_type", [None, "application/json", "application/json; indent=4"])
def test_the_renderer_writes_the_bytes_drf_writes(data, media_type):
    ours = JSONRenderer().render(data, media_type, {})
    theirs = drf_renderers.JSONRenderer().render(data, media_type, {})

    assert ours == theirs


def test_the_renderer_fails_where_drf_fails():
    with pytest.raises(TypeError):
        drf_renderers.JSONRenderer().render({"x": object()})
    with pytest.raises(TypeError):
        JSONRenderer().render({"x": object()})


BODIES = [
    b'{"ply": 3, "move": {"type": "attack", "cards": ["8S", "8D"]}, "seat": 1}',
    b'{"x": 1.5e3, "y": -0, "z": "\\u00e9\\ud83d\\ude00", "w": [true, false, null]}',
    '{"text": "héllo"}'.encode(),
    b'{"big": 123456789012345678901234567890}',
    b'{"f": 1e400, "g": -1e400, "h": 5e-324, "i": 1.7976931348623157e308, "j": 0.1}',
    # As deep as the parser reads (cardserver.renderers.MAX_JSON_DEPTH); deeper is refused.
    b'{"deep": ' + b"[" * 31 + b"]" * 31 + b"}",
    b'{"surrogate": "\\ud800"}',
    '\ufeff{"a": 1}'.encode(),
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": ',
    b"\xff\xfe\x00",
    b"[1, 2]",
    b"  7 ",
]


def _parsed(parser, body: bytes):
    try:
        return parser.parse(io.BytesIO(body), "application/json", {})
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc), str(exc)


@pytest.mark.parametrize("body", BODIES)
def test_the_parser_reads_what_drf_reads_and_refuses_what_it_refuses(body):
    ours = _parsed(JSONParser(), body)
    theirs = _parsed(drf_parsers.JSONParser(), body)

    assert ours == theirs
    assert type(ours) is type(theirs)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, "x", null, 1e-7, 12345678901234567.5]}',
        '{"big": 123456789012345678901234567890}',
        '{"n": 123456789012345678, "m": -9223372036854775808, "u": 18446744073709551615}',
        '{"f": 1e400}',
        "not json",
        "7",
    ],
)
def test_json_columns_read_as_django_reads_them(text):
    field = Match._meta.get_field("snapshot")
    (converter,) = field.get_db_converters(None)

    fast = _fast_json(converter, field)

    assert fast is not converter
    assert fast(text, None, None) == converter(text, None, None)
    assert fast(None, None, None) is None


class _Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, "é", None, True, 1e-7, 12345678901234567.5], "b": {"c": []}},
        {"big": 123456789012345678901234567890},
        {1: "a key that is not a string"},
        (1, 2),
        {"s": _Text("a subclass of str")},
        "x",
    ],
    ids=["plain", "big-int", "int-key", "tuple", "str-subclass", "string"],
)
def test_json_columns_are_written_as_json_writes_them(value):
    from cardserver import fastjson

    written = fastjson.dumps(value)

    assert json.loads(written) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", [datetime.datetime(2024, 1, 1), Decimal("1.5"), {"x": {1, 2}}])
def test_json_columns_refuse_what_json_refuses(value):
    from cardserver import fastjson

    with pytest.raises(TypeError):
        fastjson.dumps(value)


def test_a_bots_request_is_the_bytes_json_writes():
    from cardkit.engine import load_game
    from cardkit.protocol import move_request
    from cardserver import fastjson

    state = load_game("durak", players=2).deal(seed=3, dealer=0)
    request = move_request(
        state=state, match_id=7, game="durak", options={"players": 2}, time_limit=2.5
    )
    request["note"] = "é ✓"

    expected = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode()
    assert fastjson.dumps_compact(request) == expected
    assert fastjson.dumps_compact({1: 2}) == b'{"1":2}'


def test_the_match_row_holds_what_the_orm_reads(duel):
    match, _, _ = duel
    play_random_moves(match, 5)

    row = match_row(match.pk)
    orm = Match.objects.get(pk=match.pk)

    assert {f.attname: getattr(row, f.attname) for f in Match._meta.concrete_fields} == {
        f.attname: getattr(orm, f.attname) for f in Match._meta.concrete_fields
    }


# --- Move bodies ------------------------------------------------------------------------

MOVE_BODIES = [
    {"ply": 0, "move": ATTACK_8S},
    {"ply": 7, "move": ATTACK_8S, "seat": 1},
    {"ply": 7, "move": ATTACK_8S, "seat": 0, "extra": "ignored"},
    {"ply": "7", "move": ATTACK_8S},
    {"ply": 7.0, "move": ATTACK_8S},
    {"ply": True, "move": ATTACK_8S},
    {"ply": -1, "move": ATTACK_8S},
    {"ply": None, "move": ATTACK_8S},
    {"move": ATTACK_8S},
    {"ply": 0},
    {"ply": 0, "move": None},
    {"ply": 0, "move": "attack"},
    {"ply": 0, "move": {"cards": ["8S"]}},
    {"ply": 0, "move": {"type": 3}},
    {"ply": 0, "move": ATTACK_8S, "seat": None},
    {"ply": 0, "move": ATTACK_8S, "seat": -2},
    {"ply": 0, "move": ATTACK_8S, "seat": "1"},
    {"ply": 0, "move": ATTACK_8S, "seat": False},
    [],
    "ply",
]


def _validated(validate, body):
    try:
        return dict(validate(body))
    except serializers.ValidationError as exc:
        return exc.detail


def _by_serializer(body):
    form = MoveSubmitSerializer(data=body)
    form.is_valid(raise_exception=True)
    return form.validated_data


@pytest.mark.parametrize("body", MOVE_BODIES)
def test_a_move_body_is_checked_as_the_serializer_checks_it(body):
    ours = _validated(_move_request, body)
    theirs = _validated(_by_serializer, body)

    assert ours == theirs
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)


# --- Middleware -------------------------------------------------------------------------


@pytest.fixture
def session_middleware_calls(monkeypatch):
    calls = []
    process_request = SessionMiddleware.process_request

    def spy(self, request):
        calls.append(request.path)
        return process_request(self, request)

    monkeypatch.setattr(SessionMiddleware, "process_request", spy)
    return calls


def test_a_token_request_without_cookies_skips_the_session(duel, session_middleware_calls):
    match, clients, _ = duel

    response = clients[1].post(f"/api/v1/matches/{match.pk}/moves/", {"ply": 0, "move": ATTACK_8S})

    assert response.status_code == 200
    assert session_middleware_calls == []
    assert "Set-Cookie" not in response.headers
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_a_session_still_plays_through_the_api_with_its_csrf_token(
    duel, session_middleware_calls
):
    match, _, _ = duel
    seat_1 = match.seats.get(index=1).user
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(seat_1)
    url = f"/api/v1/matches/{match.pk}/moves/"

    view = browser.get(f"/api/v1/matches/{match.pk}/me/")
    refused = browser.post(url, {"ply": 0, "move": ATTACK_8S}, format="json")
    browser.get(f"/play/{match.pk}/")  # the play page sets the CSRF cookie
    played = browser.post(
        url,
        {"ply": 0, "move": ATTACK_8S},
        format="json",
        headers={"X-CSRFToken": browser.cookies["csrftoken"].value},
    )

    assert view.status_code == 200
    assert view.json()["your_seats"] == [1]
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "permission_denied"
    assert "CSRF" in refused.json()["error"]["message"]
    assert played.status_code == 200, played.content
    assert session_middleware_calls
