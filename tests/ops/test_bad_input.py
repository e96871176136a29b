"""Bad input found by an outside test: JSON nested too deep, a NUL character in a path.
Each gets a clear 4xx with the API's error body, never a 500."""

from __future__ import annotations

import pytest

from bots.models import Bot
from tests.matches import start_match, token_client

pytestmark = pytest.mark.django_db


def nested(depth: int) -> str:
    """A JSON body with ``depth`` arrays one inside another (about 2 bytes a level)."""
    return '{"ply": 0, "move": ' + "[" * depth + "]" * depth + "}"


@pytest.fixture
def bodies_targets(user_factory):
    """Every endpoint that reads a body, with a client allowed to call it."""
    user = user_factory()
    client = token_client(user)
    match = start_match([user, user])
    waiting = client.post("/api/v1/matches/", {"game": "durak", "players": 2}).json()["id"]
    Bot.objects.create(name="mine", owner=user, kind=Bot.Kind.CLIENT, games=["durak"])
    return client, [
        ("post", "/api/v1/accounts/signup/"),
        ("post", "/api/v1/accounts/token/"),
        ("post", "/api/v1/matches/"),
        ("post", f"/api/v1/matches/{waiting}/join/"),
        ("post", f"/api/v1/matches/{match.pk}/moves/"),
        ("post", f"/api/v1/matches/{match.pk}/resign/"),
        ("post", "/api/v1/bots/"),
        ("patch", "/api/v1/bots/mine/"),
        ("post", "/api/v1/tournaments/"),
    ]


@pytest.mark.parametrize("depth", [33, 1000, 30_000])
def test_json_nested_too_deep_is_refused_with_400_invalid_on_every_body(bodies_targets, depth):
    client, targets = bodies_targets

    answers = {
        path: getattr(client, method)(path, nested(depth), content_type="application/json")
        for method, path in targets
    }

    assert {path: a.status_code for path, a in answers.items()} == {
        path: 400 for _, path in targets
    }
    for answer in answers.values():
        error = answer.json()["error"]
        assert error["code"] == "invalid"
        assert "nested more than 32" in error["message"]


def test_json_nested_as_deep_as_allowed_is_read(bodies_targets):
    client, _ = bodies_targets

    answer = client.post(
        "/api/v1/accounts/token/", nested(31), content_type="application/json"
    )  # the move's object and 31 arrays: 32 deep

    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid"
    assert "nested" not in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/bots/%00/",
        "/api/v1/bots/%00/ping/",
        "/api/v1/bots/a%00b/rotate/",
        "/api/v1/ratings/bots/%00/",
        "/api/v1/ratings/%00/",
        "/leaderboard/%00/",
        "/bots/%00/",
    ],
)
def test_a_nul_character_in_a_path_is_answered_404(client, path):
    response = client.get(path)

    assert response.status_code == 404
    if path.startswith("/api/"):
        assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    ("path", "status", "code", "extra"),
    [
        ("/api/v1/bots/a%00b/", 404, "not_found", {}),
        ("/api/v1/%00/", 404, "not_found", {}),
        ("/api/v1/no-such-route/", 404, "not_found", {}),
        ("/api/%ff%fe/", 404, "not_found", {}),
        ("/api/v1/games/", 400, "bad_request", {"HTTP_HOST": "not-allowed.example"}),
    ],
)
def test_every_api_path_answers_the_json_error_body_debug_or_not(
    client, settings, debug, path, status, code, extra
):
    settings.DEBUG = debug

    response = client.get(path, **extra)

    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == code
