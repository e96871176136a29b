"""Log lines about a match carry its id: requests, services and tasks."""

from __future__ import annotations

import io
import json
import logging

import pytest

from cardserver.celery import _match_id_argument
from cardserver.logs import JsonFormatter, MatchIdFilter, current_match_id
from tests.matches import start_match, token_client


@pytest.fixture
def json_lines():
    """Capture every log record at DEBUG as JSON lines; return a function reading them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(MatchIdFilter())
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", "games", "django")}
    root.addHandler(handler)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.mark.django_db
def test_a_move_and_a_refused_move_log_json_lines_with_the_match_id(user, json_lines):
    match = start_match([user, user], decks=None)
    client = token_client(user)
    me = client.get(f"/api/v1/matches/{match.pk}/me/").json()

    played = client.post(
        f"/api/v1/matches/{match.pk}/moves/",
        {"ply": 0, "seat": me["seat"], "move": me["legal_moves"][0]},
        format="json",
    )
    refused = client.post(
        f"/api/v1/matches/{match.pk}/moves/",
        {"ply": 0, "seat": me["seat"], "move": me["legal_moves"][0]},
        format="json",
    )

    assert played.status_code == 200
    assert refused.status_code == 409
    lines = json_lines()
    assert lines, "a move logs at least one line"
    assert all(line["match_id"] == match.pk for line in lines), lines
    assert any(line["message"].startswith(f"match {match.pk} ply 0:") for line in lines)
    # Django's own line about the 409 is about the match too.
    assert any(line["logger"] == "django.request" for line in lines)


@pytest.mark.django_db
def test_a_request_about_no_match_logs_no_match_id(api_client, json_lines):
    api_client.get("/api/v1/matches/?page=999")
    api_client.get("/api/v1/bots/no-such-bot/")

    lines = json_lines()
    assert lines
    assert all("match_id" not in line for line in lines)
    assert current_match_id() is None


def test_a_task_with_a_match_id_argument_is_about_that_match():
    from bots.tasks import match_turn_started, play_bot_turns
    from games.tasks import enforce_move_deadline
    from tournaments.tasks import ladder_tick

    assert _match_id_argument(play_bot_turns, (12,), {}) == 12
    assert _match_id_argument(match_turn_started, (5, 3), {}) == 5
    assert _match_id_argument(enforce_move_deadline, (), {"match_id": 8}) == 8
    assert _match_id_argument(ladder_tick, (), {}) is None
