"""Registering bots through the API (HTTP bots pinged, client bots given a token) and
reading them: who sees what, filters, and the built-in bots."""

from __future__ import annotations

import socket

import pytest
from django.contrib.auth import get_user_model
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.test import override_settings
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.tokens import token_hash
from bots import services
from bots.models import Bot
from cardkit.protocol import verify_headers
from tests.bots.bot_api import error_fields, register
from tests.bots.conftest import answer_500, pong
from tests.matches import token_client

pytestmark = pytest.mark.django_db


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


def test_a_new_secret_never_reads_as_a_command_line_option(user_api_client, http_bot, monkeypatch):
    # One URL-safe token in 64 starts with "-": `cardkit serve bot.py --secret -x...` then
    # failed ("expected one argument"), and the load test's bot server with it.
    monkeypatch.setattr(services.secrets, "token_urlsafe", lambda n: "-" + "x" * 42)
    url, _server = http_bot(pong)

    secret = register(user_api_client, name="dash", kind="http", url=url, games=["durak"]).json()[
        "secret"
    ]
    rotated = user_api_client.post("/api/v1/bots/dash/rotate/").json()["secret"]

    for value in (secret, rotated):
        assert value.startswith(services.SECRET_PREFIX) and not value.startswith("-")


def test_http_bot_whose_ping_fails_is_registered_and_the_answer_says_so(user_api_client, http_bot):
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
    assert ApiToken.objects.get(key_hash=token_hash(data["token"])).user == bot.account


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
    as_other = token_client(user_factory()).get("/api/v1/bots/visible/").json()

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
