"""An API request leaves nothing for the garbage collector: reference counting frees it.

Whatever a request leaves in reference cycles waits for the collector, whose collections
hold every thread of a web process while they free it (``RequestCyclesMiddleware``).
"""

from __future__ import annotations

import gc
import json

import pytest
from django.test import RequestFactory
from django.test.client import ClientHandler

from accounts.tokens import token_create
from tests.api.conftest import DUEL_DECK
from tests.matches import start_match

ATTACK_8S = {"type": "attack", "cards": ["8S"]}
TAKE = {"type": "take"}


@pytest.fixture
def duel_tokens(user_factory):
    """A 2-player Durak match in play (``DUEL_DECK``: seat 1 attacks) and its seats' keys."""
    users = [user_factory(), user_factory()]
    match = start_match(users, decks=[DUEL_DECK])
    return match, [token_create(user=user)[1] for user in users]


def environ(method: str, path: str, *, token: str | None = None, body=None) -> dict:
    """The WSGI environ of one API request."""
    extra = {"HTTP_AUTHORIZATION": f"Token {token}"} if token else {}
    data = json.dumps(body) if body is not None else ""
    return RequestFactory().generic(method, path, data, "application/json", **extra).environ


def left_in_cycles(request: dict, *, warm_up: dict) -> tuple[int, list[str]]:
    """Answer ``warm_up``, then ``request``, through Django's handler; return the status of
    ``request`` and the types of what it alone left to the collector."""
    handler = ClientHandler(enforce_csrf_checks=False)
    handler(warm_up)  # first-use caches; the handler closes its response itself
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        response = handler(request)
        status = response.status_code
        del response
        gc.collect()
        return status, sorted({type(thing).__qualname__ for thing in gc.garbage})
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()


@pytest.mark.django_db
def test_games_list_leaves_no_reference_cycle():
    games = environ("GET", "/api/v1/games/")
    assert left_in_cycles(games, warm_up=environ("GET", "/api/v1/games/")) == (200, [])


def test_player_view_leaves_no_reference_cycle(duel_tokens):
    match, tokens = duel_tokens
    view = environ("GET", f"/api/v1/matches/{match.pk}/me/", token=tokens[1])
    assert left_in_cycles(view, warm_up=dict(view)) == (200, [])


def test_accepted_move_leaves_no_reference_cycle(duel_tokens):
    match, tokens = duel_tokens
    path = f"/api/v1/matches/{match.pk}/moves/"
    # Seat 1 attacks with 8S (the warm-up); seat 0 can beat nothing and takes (measured).
    attack = environ("POST", path, token=tokens[1], body={"ply": 0, "seat": 1, "move": ATTACK_8S})
    take = environ("POST", path, token=tokens[0], body={"ply": 1, "seat": 0, "move": TAKE})
    assert left_in_cycles(take, warm_up=attack) == (200, [])
    match.refresh_from_db()
    assert match.ply == 2


def test_refused_move_leaves_no_reference_cycle(duel_tokens):
    match, tokens = duel_tokens
    move = {"ply": 0, "seat": 1, "move": ATTACK_8S}
    path = f"/api/v1/matches/{match.pk}/moves/"
    # The warm-up is the move at ply 0; the one measured, the same again: a stale ply.
    attack, again = (environ("POST", path, token=tokens[1], body=move) for _ in range(2))
    assert left_in_cycles(again, warm_up=attack) == (409, [])
    match.refresh_from_db()
    assert match.ply == 1


def test_unknown_match_leaves_no_reference_cycle(duel_tokens):
    _, tokens = duel_tokens
    missing = environ("GET", "/api/v1/matches/987654/me/", token=tokens[0])
    assert left_in_cycles(missing, warm_up=dict(missing)) == (404, [])
