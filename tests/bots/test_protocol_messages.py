"""The HTTP bot protocol's messages: signatures, the move request, and which answers are
legal moves.

No Django: runs with ``-p no:django --confcutdir=tests/bots``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime

import pytest

from cardkit.protocol import (
    PROTOCOL_VERSION,
    BadSignature,
    build_request,
    check_move,
    sign,
    signed_headers,
    verify,
    verify_headers,
)
from tests.bots.conftest import SECRET

# -- signatures ---------------------------------------------------------------------------


def test_signature_is_hmac_sha256_of_timestamp_request_id_and_body():
    expected = hmac.new(b"s3cret", b'1700000000.abc.{"a":1}', hashlib.sha256).hexdigest()
    assert sign("s3cret", "1700000000", "abc", b'{"a":1}') == "sha256=" + expected


def test_verify_accepts_a_fresh_signed_request():
    headers = signed_headers(SECRET, b"{}", now=1_700_000_000)
    request_id = verify_headers(SECRET, headers, b"{}", now=1_700_000_030)
    assert request_id == headers["X-Arena-Request-Id"]


def test_each_request_gets_its_own_request_id():
    ids = {signed_headers(SECRET, b"{}")["X-Arena-Request-Id"] for _ in range(10)}
    assert len(ids) == 10


@pytest.mark.parametrize(
    ("secret", "timestamp", "request_id", "body", "message"),
    [
        ("other", "1700000000", "id", b"{}", "wrong signature"),
        (SECRET, "1700000000", "id", b'{"x":1}', "wrong signature"),
        (SECRET, "1700000000", "other-id", b"{}", "wrong signature"),
        (SECRET, "1699999939", "id", b"{}", "stale"),
        (SECRET, "1700000061", "id", b"{}", "stale"),
        (SECRET, "17e8", "id", b"{}", "Unix seconds"),
    ],
    ids=["secret", "body", "request-id", "old", "future", "not-a-number"],
)
def test_verify_refuses_a_request_changed_or_stale(secret, timestamp, request_id, body, message):
    signature = sign(SECRET, timestamp, "id", b"{}")
    with pytest.raises(BadSignature, match=message):
        verify(secret, timestamp, request_id, body, signature, now=1_700_000_000)


def test_verify_headers_refuses_a_missing_header():
    headers = signed_headers(SECRET, b"{}")
    del headers["X-Arena-Signature"]
    with pytest.raises(BadSignature, match="missing X-Arena-Signature"):
        verify_headers(SECRET, headers, b"{}")


# -- messages -----------------------------------------------------------------------------


def test_move_request_carries_everything_the_bot_may_see(position):
    deadline = datetime(2025, 5, 1, 12, 0, 5, 250_000, tzinfo=UTC)
    payload = build_request(
        match_id=7,
        game="durak",
        options={"players": 2},
        seat=0,
        view=position.view(0),
        legal_moves=position.legal_moves(),
        deadline=deadline,
        time_limit=5,
    )
    assert payload["type"] == "move"
    assert payload["protocol"] == PROTOCOL_VERSION
    assert (payload["match_id"], payload["game"], payload["seat"]) == (7, "durak", 0)
    assert payload["view"]["hand"] == position.hand(0)
    assert payload["legal_moves"] == position.legal_moves()
    assert payload["deadline"] == "2025-05-01T12:00:05.250Z"
    assert payload["time_limit_ms"] == 5000
    json.dumps(payload)


def test_check_move_treats_card_sets_in_any_order_as_equal():
    legal = [
        {"type": "attack", "cards": ["8C", "8D"]},
        {"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
    ]
    assert check_move({"cards": ["8D", "8C"], "type": "attack"}, legal) is legal[0]
    reordered = {"type": "beat", "covers": [["8D", "6S"], ["8C", "9C"]]}
    assert check_move(reordered, legal) is legal[1]


@pytest.mark.parametrize(
    "move",
    [
        {"type": "attack", "cards": ["8C"]},
        {"type": "attack", "cards": ["8C", "8C"]},
        {"type": "attack", "cards": ["8C", "8D"], "extra": 1},
        {"type": "beat", "covers": [["9C", "8C"], ["8D", "6S"]]},
        {"type": "attack", "cards": ["8C", 8]},
        {"type": "take"},
        ["attack", "8C"],
        "take",
        None,
    ],
)
def test_check_move_refuses_anything_not_legal(move):
    legal = [
        {"type": "attack", "cards": ["8C", "8D"]},
        {"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
    ]
    assert check_move(move, legal) is None
