"""The bot's time ends when its answer arrives, even if the caller's event loop was stalled
(by the GIL, behind the pool's recording threads) until after the deadline while it handled
another socket: libuv then runs the due timer before it reads the bot's socket, and the
arena's stall must not be judged as the bot's lateness. An answer that did arrive after
the deadline still times out.

No Django: runs with ``-p no:django --confcutdir=tests/bots``.
"""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest

from cardkit.protocol import Fault
from tests.bots.protocol_calls import TIME_LIMIT, answer_pair_reversed, move_request, pair_attack

# The caller's loop is kept busy this long from the moment the bot has the request: past
# the deadline (TIME_LIMIT) whatever the bot does.
STALL = TIME_LIMIT + 0.4


@pytest.fixture
def stall(caller, http_bot, position):
    """Return ``stall()``: from another thread, make the caller's event loop handle an
    event on a socket of its own that keeps it busy for STALL seconds (as a callback
    waiting for the GIL would). The caller's loop is made by a first call."""
    warm_url, _server = http_bot(answer_pair_reversed)
    _ask(caller, warm_url, position)
    loop = caller._loop
    inside, outside = socket.socketpair()
    inside.setblocking(False)

    def busy() -> None:
        inside.recv(1)
        time.sleep(STALL)

    watched = threading.Event()
    loop.call_soon_threadsafe(lambda: (loop.add_reader(inside.fileno(), busy), watched.set()))
    watched.wait(5)
    yield lambda: outside.send(b"x")
    loop.call_soon_threadsafe(loop.remove_reader, inside.fileno())
    outside.close()


def _bot_stalling_the_caller(http_bot, stall, *, answer_after: float):
    """Start a bot that, from its second request on, stalls the caller's event loop and
    answers ``answer_after`` seconds after it got the request."""

    def behaviour(handler: BaseHTTPRequestHandler, request: dict) -> None:
        if len(server.requests) > 1:
            stall()
            time.sleep(answer_after)
        answer_pair_reversed(handler, request)

    url, server = http_bot(behaviour)
    return url, server


def _ask(caller, url: str, position):
    from tests.bots.conftest import SECRET

    return caller.request_move(url, SECRET, move_request(position), TIME_LIMIT)


def test_answer_that_arrived_in_time_while_the_loop_stalled_is_the_bots_move(
    http_bot, caller, position, stall
):
    url, server = _bot_stalling_the_caller(http_bot, stall, answer_after=0.1)
    assert _ask(caller, url, position).ok

    answer = _ask(caller, url, position)

    assert answer.ok, answer
    assert answer.move == pair_attack(position.legal_moves())


def test_think_time_of_an_answer_read_late_ends_at_its_arrival(http_bot, caller, position, stall):
    url, server = _bot_stalling_the_caller(http_bot, stall, answer_after=0.1)
    _ask(caller, url, position)

    answer = _ask(caller, url, position)

    # It arrived about 0.1 s after the request; the loop read it only after STALL.
    assert answer.ok and answer.elapsed < TIME_LIMIT


def test_connection_read_past_a_stall_is_kept_for_the_next_call(http_bot, caller, position, stall):
    url, server = _bot_stalling_the_caller(http_bot, stall, answer_after=0.1)
    _ask(caller, url, position)
    _ask(caller, url, position)
    server.behaviour = lambda handler, request: answer_pair_reversed(handler, request)

    assert _ask(caller, url, position).ok
    assert len(server.client_ports) == 1


def test_answer_that_arrived_after_the_deadline_while_the_loop_stalled_times_out(
    http_bot, caller, position, stall
):
    url, server = _bot_stalling_the_caller(http_bot, stall, answer_after=TIME_LIMIT + 0.2)
    _ask(caller, url, position)

    answer = _ask(caller, url, position)

    assert answer.fault == Fault.TIMEOUT
