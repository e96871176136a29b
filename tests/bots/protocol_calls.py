"""A move request as the arena sends it, and a timed call of a test bot with it.

No Django: the protocol tests that use it run without it.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler

from cardkit.caller import BotCaller
from cardkit.protocol import build_request, verify_headers
from tests.bots.conftest import SECRET, reply

TIME_LIMIT = 0.5
# How long past the time limit a call may take to come back: thread scheduling only (0.3 s
# was passed once at load 13). A caller that let a trickling bot reset its timer would take
# the bot's whole answer, 100 s, so the bound still tells the two apart.
SLACK = 1.0


def pair_attack(legal_moves: list[dict]) -> dict:
    return next(move for move in legal_moves if len(move.get("cards", ())) == 2)


def answer_pair_reversed(handler: BaseHTTPRequestHandler, request: dict) -> None:
    """Answer like a correct bot: a legal two-card attack, its cards in the other order."""
    verify_headers(SECRET, handler.headers, request["raw"])
    move = dict(pair_attack(request["body"]["legal_moves"]))
    move["cards"] = list(reversed(move["cards"]))
    reply(handler, json.dumps({"move": move}).encode())


def move_request(state) -> dict:
    """Return the request for the move of the seat to move in ``state`` (a Durak deal)."""
    seat = state.to_move
    return build_request(
        match_id=7,
        game="durak",
        options={"players": 2, "deck_size": 36},
        seat=seat,
        view=state.view(seat),
        legal_moves=state.legal_moves(),
        deadline=datetime.now(UTC) + timedelta(seconds=TIME_LIMIT),
        time_limit=TIME_LIMIT,
    )


def call(caller: BotCaller, url: str, state):
    """Ask the bot at ``url`` for its move in ``state``; assert it took the time limit at most."""
    started = time.monotonic()
    answer = caller.request_move(url, SECRET, move_request(state), TIME_LIMIT)
    assert time.monotonic() - started < TIME_LIMIT + SLACK
    return answer
