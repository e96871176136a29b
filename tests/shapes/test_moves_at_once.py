"""On both shapes of the arena, the built-in bot's move after another player's is played
at once, whoever made that move: an HTTP bot (a tournament, a ladder deal, a sequential
test) or a person or client bot (through the move service the API calls). Before the
embedded broker's fix, its replies waited 2 s for each hop through the broker and
queued behind each other (12-34 s), and the tournament watchdog aborted matches."""

from __future__ import annotations

import json

import pytest

from tests.bots.conftest import reply
from tests.shapes.arena import SHAPE_PARAMS, arena_of
from tests.shapes.scenarios import PATHS

pytestmark = [pytest.mark.real_services, pytest.mark.timeout(600)]


@pytest.fixture(params=SHAPE_PARAMS)
def arena(request, tmp_path):
    arena = arena_of(request.param, tmp_path / request.param)
    try:
        yield arena
    finally:
        arena.stop()


def instant(handler, request) -> None:
    """An HTTP bot that answers at once: its first legal move, or a pong."""
    body = {"pong": True} if request["body"]["type"] == "ping" else None
    if body is None:
        body = {"move": request["body"]["legal_moves"][0]}
    reply(handler, json.dumps(body).encode())


def test_built_in_reply_comes_at_once_on_every_path(arena, http_bot):
    url, _server = http_bot(instant)
    arena.start("cpu")
    arena.start("calls")

    report = arena.run(
        f"from tests.shapes.scenarios import every_path_play\nevery_path_play(bot_url={url!r})"
    )

    assert report["attempts_max"] == 1, report
    for path in PATHS:
        figures = report["paths"][path]
        assert figures["matches"] >= 2 and figures["replies"] > 0, (path, figures)
        assert set(figures["statuses"]) == {"finished"}, (path, figures, arena.logs())
        assert figures["forfeits"] == 0, (path, figures)
        # At once: a broker hop and a decision, not a wait for the worker's loop (before
        # the fix: medians of 8 s, the longest 10-12 s) or for the watchdog.
        assert figures["reply_median"] < 1.0, (path, figures)
        assert figures["reply_max"] < 10.0, (path, figures)
