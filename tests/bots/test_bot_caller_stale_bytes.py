"""A kept-alive connection on which a bot wrote bytes after its answer is closed, never
reused: those bytes must not be read as the bot's next answer (the caller's event loop
sees them on the socket before it lends the connection again)."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler

from tests.bots.conftest import SECRET, reply
from tests.bots.protocol_calls import move_request


def test_bytes_a_bot_wrote_after_its_answer_are_not_its_next_answer(http_bot, caller, position):
    legal = position.legal_moves()
    first, second = legal[0], legal[-1]

    def behaviour(handler: BaseHTTPRequestHandler, request: dict) -> None:
        if len(handler.server.requests) == 1:
            reply(handler, json.dumps({"move": first}).encode())
            time.sleep(0.1)
            # A second response nobody asked for, on the connection kept alive.
            stale = json.dumps({"move": first}).encode()
            handler.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(stale), stale)
            )
        else:
            reply(handler, json.dumps({"move": second}).encode())

    url, server = http_bot(behaviour)
    assert caller.request_move(url, SECRET, move_request(position), 2.0).move == first
    time.sleep(0.3)

    answer = caller.request_move(url, SECRET, move_request(position), 2.0)

    assert answer.move == second, answer
    assert len(server.requests) == 2
    assert len(server.client_ports) == 2
