"""A stream whose client stops reading is cut off after ``LIVE_SEND_TIMEOUT``.

The server (uvicorn, started by the test) is given a small kernel send buffer, as a slow
network path would leave it, and the client a small receive buffer; the client opens its
account stream, reads the first event, and reads no more while matches are played.
"""

from __future__ import annotations

import random
import socket

import pytest
from django.test import override_settings

from accounts.tokens import token_create
from benchmarks.harness import wait_until
from games import live, stream_caps
from games.models import Match
from games.move_services import match_move_submit
from games.selectors import match_state
from tests.live.server import LiveServer
from tests.matches import start_match

pytestmark = pytest.mark.django_db(transaction=True)

# asyncio's (and uvloop's) default high-water mark of a transport's write buffer: past it
# the server waits for the client before it sends more.
HIGH_WATER = 64 * 1024


def server_side(server: LiveServer, client: socket.socket):
    """Return the server's connection (uvicorn's protocol) of ``client``."""
    for connection in list(server.server.server_state.connections):
        if connection.transport.get_extra_info("peername") == client.getsockname():
            return connection
    raise LookupError("no such connection")


@override_settings(LIVE_SEND_TIMEOUT=1.0, LIVE_KEEPALIVE=0.5)
def test_a_stream_whose_client_stops_reading_is_cut_off(user_factory):
    user = user_factory(username="both-seats")
    token = token_create(user=user)[1]
    rng = random.Random(7)
    with LiveServer(send_buffer=4096) as server:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.settimeout(10)
        client.connect(("127.0.0.1", server.port))
        client.sendall(
            b"GET /api/v1/stream/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Token {token}\r\n\r\n".encode()
        )
        # The stream answers before the match starts, and an empty read fails at once: a
        # stream refused at its opening must not leave the loop below reading forever.
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = client.recv(65536)
            assert chunk, received
            received += chunk
        assert received.startswith(b"HTTP/1.1 200"), received
        match = start_match([user, user])
        while b"your_turn" not in received:
            chunk = client.recv(65536)
            assert chunk, received
            received += chunk
        connection = server_side(server, client)
        waiter = next(iter(live._hub._waiters[live.account_key(user.pk)]))

        # The client reads no more; every ply is a turn of this account (both seats).
        buffered, unread = [], []
        for _ in range(5000):
            if connection not in server.server.server_state.connections:
                break
            match.refresh_from_db()
            if match.status != Match.Status.ACTIVE:
                match = start_match([user, user])
            move = rng.choice(match_state(match).legal_moves())
            match_move_submit(match_id=match.pk, seat=match.to_move, ply=match.ply, move=move)
            buffered.append(connection.transport.get_write_buffer_size())
            unread.append(len(waiter.inbox))

        wait_until(
            lambda: connection not in server.server.server_state.connections,
            timeout=30,
            what="the server to close the connection of a client that stopped reading",
        )
        # Nothing waits for it any longer: no waiter, no place counted against the caps.
        wait_until(
            lambda: live.account_key(user.pk) not in live._hub._waiters
            and user.pk not in stream_caps._open_by_account,
            timeout=10,
            what="the stream's waiter and lease to be released",
        )
        # While it was held, what the server kept for it stayed bounded: at most one
        # chunk past the high-water mark, and the waiter's inbox of messages.
        assert max(buffered) < HIGH_WATER + 16 * 1024, max(buffered)
        assert max(unread) <= live.INBOX_SIZE
        # The client finds its connection cut: what it can still read ends with EOF or a
        # reset, without the events played since.
        with pytest.raises(ConnectionResetError):
            while client.recv(65536):
                pass
        client.close()
