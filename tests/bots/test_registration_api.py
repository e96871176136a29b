"""Registering bots through the API, their credentials, owner-only changes, and health pings."""

from __future__ import annotations

import socket

import pytest
from django.contrib.auth import get_user_model
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bots import services
from bots.models import Bot
from bots.protocol import verify_headers
from tests.bots.conftest import reply

pytestmark = pytest.mark.django_db


def pong(handler, request) -> None:
    """Answer every request like a healthy bot that does not check signatures."""
    reply(handler, b'{"pong": true}')


def answer_500(handler, request) -> None:
    reply(handler, b'{"error": "down"}', status=500)


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def register(client: APIClient, **fields):
    body = {"name": "mybot", "kind": "client", "games": ["durak"], **fields}
    return client.post("/api/v1/bots/", body, format="json")


def error_fields(response) -> set[str]:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    return set(error["detail"])


@pytest.fixture
def http_bot_of(user, http_bot):
    """Return ``make(name="hb", behaviour=pong) -> (Bot, secret, server)``: an HTTP bot of
    ``user`` registered through the service."""

    def make(name: str = "hb", behaviour=pong):
        url, server = http_bot(behaviour)
        bot, secret = services.bot_register(
            owner=user, name=name, kind="http", games=["durak"], url=url
        )
        return bot, secret, server

    return make


# -- registration -----------------------------------------------------------------------


def test_http_bot_registration_returns_its_secret_once_and_records_a_good_ping(
    user_api_client, http_bot
):
    url, server = http_bot(pong)

    response = register(
        user_api_client, name="pinger", kind="http", url=url, games=["durak", "volynshchik"]
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["name"] == "pinger"
    assert data["kind"] == "http"
    assert data["games"] == ["durak", "volynshchik"]
    assert data["url"] == url
    assert data["token"] is None
    assert len(data["secret"]) >= 40
    assert data["last_ping_ok"] is True
    assert data["healthy"] is True
    assert data["consecutive_failures"] == 0
    # The registration ping was signed with the secret the answer shows.
    (ping,) = server.requests
    assert ping["body"] == {"type": "ping", "protocol": 1}
    body = b'{"type":"ping","protocol":1}'
    verify_headers(data["secret"], ping["headers"], body)
    assert Bot.objects.get(name="pinger").secret == data["secret"]
    # Never shown again.
    shown = user_api_client.get("/api/v1/bots/pinger/").json()
    assert "secret" not in shown and "token" not in shown


def test_http_bot_whose_ping_fails_is_registered_and_the_answer_says_so(
    user_api_client, http_bot
):
    url, _server = http_bot(answer_500)

    response = register(user_api_client, name="broken", kind="http", url=url)

    assert response.status_code == 201
    data = response.json()
    assert data["last_ping_ok"] is False
    assert data["last_ping_detail"] == "http_status: HTTP 500"
    assert data["consecutive_failures"] == 1
    assert data["healthy"] is True
    assert data["secret"]


def test_client_bot_registration_returns_a_token_of_its_own_account(user_api_client, user):
    response = register(user_api_client, name="clienty", kind="client", description="hi")

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["secret"] is None
    assert data["url"] is None
    assert data["owner"] == user.username
    bot = Bot.objects.get(name="clienty")
    assert bot.account.username == "bot:clienty"
    assert not bot.account.has_usable_password()
    assert bot.owner == user
    # The token signs in as the bot's account, not as its owner.
    as_bot = APIClient()
    as_bot.credentials(HTTP_AUTHORIZATION=f"Token {data['token']}")
    assert as_bot.post("/api/v1/bots/clienty/disable/").status_code == 403
    assert Token.objects.get(key=data["token"]).user == bot.account


def test_registration_needs_a_signed_in_user(api_client):
    response = register(api_client)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": "x"}, "name"),
        ({"name": "-dash-first"}, "name"),
        ({"name": "has space"}, "name"),
        ({"name": "a" * 41}, "name"),
        ({"games": ["chess"]}, "games"),
        ({"games": []}, "games"),
        ({"games": "durak"}, "games"),
        ({"kind": "builtin"}, "kind"),
        ({"kind": "ftp"}, "kind"),
        ({"kind": "http"}, "url"),
        ({"kind": "http", "url": "ftp://example.org/bot"}, "url"),
        ({"kind": "http", "url": "http://user:pw@127.0.0.1:9/"}, "url"),
        ({"kind": "client", "url": "http://127.0.0.1:9/"}, "url"),
    ],
)
def test_bad_registration_is_refused_with_400_naming_the_field(user_api_client, fields, field):
    response = register(user_api_client, **fields)

    assert field in error_fields(response)
    assert not Bot.objects.filter(kind__in=["http", "client"]).exists()


def test_taken_name_is_refused_whatever_its_case(user_api_client):
    assert register(user_api_client, name="Taken").status_code == 201

    assert error_fields(register(user_api_client, name="Taken")) == {"name"}
    assert error_fields(register(user_api_client, name="tAKEN")) == {"name"}
    # The built-in bots' names are taken from the start.
    assert error_fields(register(user_api_client, name="Greedy")) == {"name"}


@override_settings(BOTS_ALLOW_PRIVATE_URLS=False)
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9001/",
        "http://localhost:9001/",
        "http://10.1.2.3/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9001/",
        "http://2130706433/",
    ],
)
def test_private_url_is_refused_when_the_setting_forbids_it(user_api_client, url):
    response = register(user_api_client, kind="http", url=url)

    assert error_fields(response) == {"url"}
    assert "public internet" in response.json()["error"]["detail"]["url"][0]


def test_url_whose_host_does_not_resolve_is_refused(user_api_client, monkeypatch):
    def no_such_host(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)

    response = register(user_api_client, kind="http", url="http://no-such-bot.example/")

    assert error_fields(response) == {"url"}
    assert "does not resolve" in response.json()["error"]["detail"]["url"][0]


def test_private_urls_are_allowed_by_default_in_development_and_tests(settings):
    assert settings.BOTS_ALLOW_PRIVATE_URLS is True


def test_builtin_bots_exist_and_ensuring_them_again_changes_nothing():
    before = {bot.name: bot.pk for bot in Bot.objects.filter(kind="builtin")}

    bots = services.builtin_bots_ensure()

    assert {bot.name: bot.pk for bot in bots} == before
    assert sorted(before) == ["greedy", "random", "strong"]
    for bot in bots:
        assert bot.builtin == bot.name
        assert bot.games == ["durak", "volynshchik"]
        assert bot.owner.username == "arena:builtin"
        assert not bot.owner.has_usable_password()


def test_missing_builtin_bots_are_created():
    # Moving the migration's bots aside stands for a database that lacks them.
    Bot.objects.filter(kind="builtin").update(name=Concat(F("name"), Value("-old")))

    created = services.builtin_bots_ensure()

    assert [bot.name for bot in created] == ["random", "greedy", "strong"]
    assert {bot.owner.username for bot in created} == {"arena:builtin"}
    assert get_user_model().objects.filter(username="arena:builtin").count() == 1


# -- reading --------------------------------------------------------------------------


def test_anyone_may_list_bots_but_only_the_owner_sees_a_url(
    api_client, user_api_client, user_factory, http_bot_of
):
    bot, _secret, _server = http_bot_of("visible")

    listed = {b["name"]: b for b in api_client.get("/api/v1/bots/").json()["results"]}
    as_owner = user_api_client.get("/api/v1/bots/visible/").json()
    as_other = client_for(user_factory()).get("/api/v1/bots/visible/").json()

    assert listed["visible"]["url"] is None
    assert listed["visible"]["owner"] == bot.owner.username
    assert as_owner["url"] == bot.url
    assert as_other["url"] is None
    for shown in (listed["visible"], as_owner, as_other):
        assert "secret" not in shown
    assert bot.secret not in str(listed) + str(as_owner) + str(as_other)


def test_list_filters_by_owner_kind_and_game(api_client, user, user_api_client):
    register(user_api_client, name="durakonly", games=["durak"])
    register(user_api_client, name="volonly", games=["volynshchik"])

    def names(query: str) -> set[str]:
        response = api_client.get(f"/api/v1/bots/?{query}")
        assert response.status_code == 200, response.content
        return {b["name"] for b in response.json()["results"]}

    assert names(f"owner={user.username}") == {"durakonly", "volonly"}
    assert names("kind=builtin") == {"random", "greedy", "strong"}
    assert names(f"owner={user.username}&game=volynshchik") == {"volonly"}
    assert names("game=durak") >= {"durakonly", "random"}
    assert "volonly" not in names("game=durak")


def test_client_bot_learns_its_name_from_its_token(api_client, user_api_client):
    token = register(user_api_client, name="whoami").json()["token"]
    register(user_api_client, name="other")
    as_bot = APIClient()
    as_bot.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    mine = as_bot.get("/api/v1/bots/?account=me").json()["results"]
    owners = user_api_client.get("/api/v1/bots/?account=me").json()["results"]
    anonymous = api_client.get("/api/v1/bots/?account=me").json()["results"]

    assert [bot["name"] for bot in mine] == ["whoami"]
    assert owners == [] and anonymous == []


def test_unknown_bot_answers_404(api_client):
    response = api_client.get("/api/v1/bots/nobody/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


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
    token_before = Token.objects.get(user__username="bot:mine").key

    other = getattr(client_for(user_factory()), method)(path, body, format="json")
    anonymous = getattr(api_client, method)(path, body, format="json")

    assert other.status_code == 403
    assert other.json()["error"]["code"] == "permission_denied"
    assert anonymous.status_code == 401
    assert Bot.objects.values().get(name="mine") == before
    assert Token.objects.get(user__username="bot:mine").key == token_before


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
