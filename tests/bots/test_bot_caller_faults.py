"""Hostile bots against the arena's bot caller: every one ends in a fault with the right
reason within the move's time limit, and never in another bot's answer.

No Django: runs with ``-p no:django --confcutdir=tests/bots``.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler

import pytest

from cardkit.protocol import MAX_RESPONSE_BYTES, Fault
from tests.bots.conftest import (
    SECRET,
    answer_10_mib,
    answer_500,
    close_connection,
    reply,
    sleep_past_deadline,
)
from tests.bots.protocol_calls import answer_pair_reversed, call, move_request

# -- hostile bots -------------------------------------------------------------------------


def trickle(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    while not handler.server.release.wait(0.1):
        handler.wfile.write(b" ")


def answer_illegal(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b'{"move": {"type": "take"}}')


def answer_10_mib_chunked(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b"x" * 65536
    for _ in range(160):
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def redirect(handler: BaseHTTPRequestHandler, request: dict) -> None:
    if request["path"] == "/move":
        reply(handler, b"", status=307, Location="/elsewhere")
    else:
        answer_pair_reversed(handler, request)


def answer_gzip(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b"\x1f\x8b", Content_Encoding="gzip")


@pytest.mark.parametrize(
    ("behaviour", "fault"),
    [
        (sleep_past_deadline, Fault.TIMEOUT),
        (trickle, Fault.TIMEOUT),
        (answer_illegal, Fault.ILLEGAL_MOVE),
        (answer_10_mib, Fault.RESPONSE_TOO_LARGE),
        (answer_10_mib_chunked, Fault.RESPONSE_TOO_LARGE),
        (answer_500, Fault.HTTP_STATUS),
        (redirect, Fault.REDIRECT),
        (close_connection, Fault.CONNECTION_ERROR),
        (answer_gzip, Fault.MALFORMED_RESPONSE),
    ],
    ids=lambda value: getattr(value, "__name__", value),
)
def test_hostile_bot_forfeits_within_the_time_limit(http_bot, caller, position, behaviour, fault):
    url, server = http_bot(behaviour)
    answer = call(caller, url, position)
    assert answer.fault == fault, answer
    assert answer.move is None
    assert answer.detail
    # Never retried, never followed: the bot got exactly the one request.
    assert [r["path"] for r in server.requests] == ["/move"]


@pytest.mark.parametrize(
    "content",
    [
        b'{"move": ',
        b"not json",
        b"\xff\xfe",
        b"[]",
        b'{"mv": {"type": "take"}}',
        b'{"move": "take"}',
        # Nested past any parser's stack, well within the size limit.
        b'{"move": ' + b"[" * 30_000 + b"]" * 30_000 + b"}",
        b'{"move": {"cards": ' + b"[" * 900 + b"]" * 900 + b"}}",
    ],
    ids=["cut", "text", "bytes", "list", "no-move", "string", "nested-30000", "cards-900"],
)
@pytest.mark.parametrize("codec", ["json", "pool"])
def test_malformed_answer_forfeits(http_bot, position, content, codec):
    """With the standard library's JSON and with the I/O pool's (orjson where it reads
    and writes what json does: ``bots.pool``) alike."""
    from cardkit.caller import BotCaller
    from cardserver import fastjson

    options = {"dumps": fastjson.dumps_compact, "loads": fastjson.loads_or_json}
    url, _server = http_bot(lambda handler, request: reply(handler, content))
    with BotCaller(allow_private=True, **(options if codec == "pool" else {})) as caller:
        answer = call(caller, url, position)
    assert answer.fault == Fault.MALFORMED_RESPONSE, answer


def test_status_fault_names_the_status(http_bot, caller, position):
    url, _server = http_bot(answer_500)
    assert call(caller, url, position).detail == "HTTP 500"


def test_response_limit_is_64_kib(http_bot, caller, position):
    padding = MAX_RESPONSE_BYTES - len(b'{"move": {"type": "take"}, "p": ""}')
    exactly = b'{"move": {"type": "take"}, "p": "' + b" " * padding + b'"}'
    url, _server = http_bot(lambda handler, request: reply(handler, exactly))
    assert call(caller, url, position).fault == Fault.ILLEGAL_MOVE
    url, _server = http_bot(lambda handler, request: reply(handler, exactly + b" "))
    assert call(caller, url, position).fault == Fault.RESPONSE_TOO_LARGE


def test_bytes_one_bot_sends_after_its_answer_never_become_another_bots_answer(
    http_bot, caller, position
):
    """Two owners' bots behind one host and port: ``/m`` writes a second response a moment
    after its answer, on the connection the arena kept alive."""
    legal = position.legal_moves()
    mine, theirs = legal[0], legal[-1]

    def behaviour(handler: BaseHTTPRequestHandler, request: dict) -> None:
        if request["path"] == "/m":
            reply(handler, json.dumps({"move": mine}).encode())
            time.sleep(0.2)
            stale = json.dumps({"move": mine}).encode()
            handler.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(stale), stale)
            )
        else:
            reply(handler, json.dumps({"move": theirs}).encode())

    url, server = http_bot(behaviour)
    base = url.removesuffix("/move")
    assert caller.request_move(base + "/m", SECRET, move_request(position), 2.0).move == mine

    answer = caller.request_move(base + "/v", "other-secret", move_request(position), 2.0)

    assert answer.move == theirs, answer
    assert [r["path"] for r in server.requests] == ["/m", "/v"]
