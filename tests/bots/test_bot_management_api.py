"""Bots after registration: owner-only changes, rotated credentials, and health pings."""

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from accounts.models import ApiToken
from bots import services
from bots.models import Bot
from tests.bots.bot_api import error_fields, register
from tests.bots.conftest import answer_500, pong
from tests.matches import token_client

pytestmark = pytest.mark.django_db


# -- owner-only changes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("patch", "/api/v1/bots/mine/", {"description": "hacked"}),
        ("post", "/api/v1/bots/mine/rotate/", None),
        ("post", "/api/v1/bots/mine/enable/", None),
        ("post", "/api/v1/bots/mine/disable/", None),
        ("post", "/api/v1/bots/mine/ping/", None),
    ],
)
def test_only_the_owner_may_change_a_bot(
    api_client, user_api_client, user_factory, method, path, body
):
    assert register(user_api_client, name="mine").status_code == 201
    before = Bot.objects.values().get(name="mine")
    token_before = ApiToken.objects.get(user__username="bot:mine").key_hash

    other = getattr(token_client(user_factory()), method)(path, body, format="json")
    anonymous = getattr(api_client, method)(path, body, format="json")

    assert other.status_code == 403
    assert other.json()["error"]["code"] == "permission_denied"
    assert anonymous.status_code == 401
    assert Bot.objects.values().get(name="mine") == before
    assert ApiToken.objects.get(user__username="bot:mine").key_hash == token_before


def test_builtin_bots_cannot_be_changed_through_the_api(user_api_client):
    response = user_api_client.post("/api/v1/bots/greedy/disable/")

    assert response.status_code == 403
    assert Bot.objects.get(name="greedy").enabled


def test_owner_changes_description_and_games(user_api_client):
    register(user_api_client, name="editable")

    response = user_api_client.patch(
        "/api/v1/bots/editable/",
        {"description": "plays both", "games": ["durak", "volynshchik"]},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["description"] == "plays both"
    bot = Bot.objects.get(name="editable")
    assert (bot.description, bot.games) == ("plays both", ["durak", "volynshchik"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"games": ["poker"]}, "games"),
        ({"games": []}, "games"),
        ({"url": "http://127.0.0.1:9/"}, "url"),
    ],
)
def test_bad_change_is_refused_with_400(user_api_client, body, field):
    register(user_api_client, name="clientbot")

    response = user_api_client.patch("/api/v1/bots/clientbot/", body, format="json")

    assert field in error_fields(response)
    assert Bot.objects.get(name="clientbot").games == ["durak"]


def test_new_url_is_checked_and_pinged(user_api_client, http_bot_of, http_bot):
    bot, _secret, _server = http_bot_of("mover", behaviour=answer_500)
    new_url, new_server = http_bot(pong)

    with override_settings(BOTS_ALLOW_PRIVATE_URLS=False):
        refused = user_api_client.patch(
            "/api/v1/bots/mover/", {"url": "http://10.0.0.1/"}, format="json"
        )
    moved = user_api_client.patch("/api/v1/bots/mover/", {"url": new_url}, format="json")

    assert error_fields(refused) == {"url"}
    assert moved.status_code == 200
    assert moved.json()["url"] == new_url
    assert moved.json()["last_ping_ok"] is True
    assert moved.json()["consecutive_failures"] == 0
    assert len(new_server.requests) == 1


def test_owner_disables_and_enables_a_bot(user_api_client):
    register(user_api_client, name="switch")

    disabled = user_api_client.post("/api/v1/bots/switch/disable/")
    assert disabled.status_code == 200
    assert disabled.json()["enabled"] is False
    assert not Bot.objects.get(name="switch").enabled

    enabled = user_api_client.post("/api/v1/bots/switch/enable/")
    assert enabled.json()["enabled"] is True
    assert Bot.objects.get(name="switch").enabled


# -- credentials ------------------------------------------------------------------------


def test_rotating_a_client_bot_token_invalidates_the_old_one(user_api_client):
    old = register(user_api_client, name="rotor").json()["token"]

    response = user_api_client.post("/api/v1/bots/rotor/rotate/")

    assert response.status_code == 200
    new = response.json()["token"]
    assert response.json() == {"name": "rotor", "secret": None, "token": new}
    assert new != old
    with_old, with_new = APIClient(), APIClient()
    with_old.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    with_new.credentials(HTTP_AUTHORIZATION=f"Token {new}")
    assert with_old.get("/api/v1/bots/").status_code == 401
    assert with_new.get("/api/v1/bots/").status_code == 200


def test_rotating_an_http_bot_secret_signs_later_requests_with_the_new_one(
    user_api_client, user, kit_http_bot
):
    url, kit = kit_http_bot("not-yet-known")
    registered = register(user_api_client, name="signer", kind="http", url=url).json()
    assert registered["last_ping_ok"] is False  # The kit refused the unknown secret: 401.
    old = registered["secret"]
    kit.secret = old
    assert user_api_client.post("/api/v1/bots/signer/ping/").json()["ok"] is True

    response = user_api_client.post("/api/v1/bots/signer/rotate/")

    assert response.status_code == 200
    new = response.json()["secret"]
    assert response.json()["token"] is None
    assert new != old
    assert Bot.objects.get(name="signer").secret == new
    # The bot still checks the old secret: the arena's requests now fail there...
    stale = user_api_client.post("/api/v1/bots/signer/ping/").json()
    assert (stale["ok"], stale["fault"], stale["detail"]) == (False, "http_status", "HTTP 401")
    # ...until the bot learns the new one.
    kit.secret = new
    assert user_api_client.post("/api/v1/bots/signer/ping/").json()["ok"] is True


def test_builtin_bot_has_no_credentials_to_rotate():
    with pytest.raises(Exception, match="no credentials"):
        services.bot_credentials_rotate(bot_id=Bot.objects.get(name="random").pk)


# -- health -------------------------------------------------------------------------------


def test_ping_records_a_good_answer(user_api_client, http_bot_of):
    bot, _secret, server = http_bot_of("healthy")

    response = user_api_client.post("/api/v1/bots/healthy/ping/")

    assert response.status_code == 200
    data = response.json()
    assert data["ok"] is True
    assert data["fault"] is None
    assert data["bot"]["last_ping_ok"] is True
    assert data["bot"]["healthy"] is True
    assert len(server.requests) == 2  # At registration and now.


def test_bot_is_unhealthy_after_consecutive_failed_pings_and_healthy_after_a_good_one(
    user_api_client, http_bot_of, settings
):
    settings.BOTS_UNHEALTHY_AFTER = 3
    bot, _secret, server = http_bot_of("flaky", behaviour=answer_500)  # First failure.

    second = user_api_client.post("/api/v1/bots/flaky/ping/").json()
    assert (second["ok"], second["fault"]) == (False, "http_status")
    assert second["bot"]["healthy"] is True
    assert second["bot"]["consecutive_failures"] == 2

    third = user_api_client.post("/api/v1/bots/flaky/ping/").json()
    assert third["bot"]["healthy"] is False
    assert third["bot"]["consecutive_failures"] == 3
    assert third["bot"]["last_ping_detail"] == "http_status: HTTP 500"

    server.behaviour = pong
    recovered = user_api_client.post("/api/v1/bots/flaky/ping/").json()
    assert recovered["ok"] is True
    assert recovered["bot"]["healthy"] is True
    assert recovered["bot"]["consecutive_failures"] == 0
    assert Bot.objects.filter(healthy=False).count() == 0


def test_unhealthy_bots_can_be_listed(api_client, http_bot_of, settings):
    settings.BOTS_UNHEALTHY_AFTER = 1
    http_bot_of("sick", behaviour=answer_500)
    http_bot_of("well")

    response = api_client.get("/api/v1/bots/?healthy=false")

    assert [b["name"] for b in response.json()["results"]] == ["sick"]


def test_only_http_bots_are_pinged(user_api_client):
    register(user_api_client, name="quiet")

    response = user_api_client.post("/api/v1/bots/quiet/ping/")

    assert response.status_code == 400
    assert "Only HTTP bots" in response.json()["error"]["message"]


def test_ping_task_pings_http_bots_and_skips_the_rest(http_bot_of):
    from bots.tasks import ping_bot

    bot, _secret, server = http_bot_of("tasked")

    ping_bot(bot.pk)
    ping_bot(Bot.objects.get(name="greedy").pk)
    ping_bot(10**9)

    assert len(server.requests) == 2
    assert Bot.objects.get(pk=bot.pk).last_ping_ok is True


def test_periodic_ping_queues_one_ping_per_enabled_http_bot(http_bot_of, monkeypatch):
    from bots import tasks

    queued = []
    monkeypatch.setattr(tasks.ping_bot, "delay", queued.append)
    first, _, _ = http_bot_of("first")
    second, _, _ = http_bot_of("second")
    services.bot_set_enabled(bot_id=second.pk, enabled=False)

    assert tasks.ping_http_bots() == 1
    assert queued == [first.pk]
