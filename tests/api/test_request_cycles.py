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
from rest_framework.authtoken.models import Token

from tests.api.conftest import DUEL_DECK
from tests.matches import start_match

ATTACK_8S = {"type": "attack", "cards": ["8S"]}


@pytest.fixture
def duel_tokens(user_factory):
    """A 2-player Durak match in play (``DUEL_DECK``: seat 1 attacks) and its seats' keys."""
    users = [user_factory(), user_factory()]
    match = start_match(users, decks=[DUEL_DECK])
    return match, [Token.objects.get_or_create(user=user)[0].key for user in users]


def left_in_cycles(method: str, path: str, *, token: str | None = None, body=None) -> list:
    """Answer one request through Django's handler; return the types of what it left to
    the collector (and the status), after one request of the same kind to warm up."""
    handler = ClientHandler(enforce_csrf_checks=False)
    factory = RequestFactory()
    extra = {"HTTP_AUTHORIZATION": f"Token {token}"} if token else {}

    def environ() -> dict:
        data = json.dumps(body) if body is not None else ""
        return factory.generic(method, path, data, "application/json", **extra).environ

    handler(environ())  # the handler closes its response (request_finished)
    request_environ = environ()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        response = handler(request_environ)
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
    assert left_in_cycles("GET", "/api/v1/games/") == (200, [])


def test_player_view_leaves_no_reference_cycle(duel_tokens):
    match, tokens = duel_tokens
    got = left_in_cycles("GET", f"/api/v1/matches/{match.pk}/me/", token=tokens[1])
    assert got == (200, [])


def test_move_leaves_no_reference_cycle(duel_tokens):
    match, tokens = duel_tokens
    path = f"/api/v1/matches/{match.pk}/moves/"
    # The warm-up request is the move at ply 0; the one measured, a refusal of a stale ply.
    move = {"ply": 0, "seat": 1, "move": ATTACK_8S}
    status, left = left_in_cycles("POST", path, token=tokens[1], body=move)
    assert (status, left) == (409, [])
    match.refresh_from_db()
    assert match.ply == 1


def test_accepted_move_leaves_no_reference_cycle(duel_tokens):
    match, tokens = duel_tokens
    handler = ClientHandler(enforce_csrf_checks=False)
    path = f"/api/v1/matches/{match.pk}/moves/"
    factory = RequestFactory()
    # Seat 1 attacks with 8S; seat 0 can beat nothing and takes; the measured request is
    # the next attack. One warm-up move of the same endpoint comes first.
    bodies = [
        {"ply": 0, "seat": 1, "move": ATTACK_8S},
        {"ply": 1, "seat": 0, "move": {"type": "take"}},
    ]
    for body in bodies:
        environ = factory.generic(
            "POST", path, json.dumps(body), "application/json",
            HTTP_AUTHORIZATION=f"Token {tokens[body['seat']]}",
        ).environ  # fmt: skip
        response = handler(environ)
        assert response.status_code == 200, response.content
    view = left_in_cycles("GET", f"/api/v1/matches/{match.pk}/me/", token=tokens[1])
    assert view == (200, [])


def test_unknown_match_leaves_no_reference_cycle(duel_tokens):
    _, tokens = duel_tokens
    assert left_in_cycles("GET", "/api/v1/matches/987654/me/", token=tokens[0]) == (404, [])
