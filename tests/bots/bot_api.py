"""Bots registered through the API, and the field errors of a refused request."""

from __future__ import annotations

from rest_framework.test import APIClient


def register(client: APIClient, **fields):
    """POST a bot registration (a client bot ``mybot`` for Durak unless ``fields`` say)."""
    body = {"name": "mybot", "kind": "client", "games": ["durak"], **fields}
    return client.post("/api/v1/bots/", body, format="json")


def error_fields(response) -> set[str]:
    """Assert ``response`` is a 400 ``invalid`` error; return the fields it names."""
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    return set(error["detail"])
