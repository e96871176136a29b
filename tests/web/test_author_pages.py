"""The bot author's pages: My bots, API tokens, call logs (the owner's alone), pause
notices and their mail, owners' profiles."""

from __future__ import annotations

import json
import threading

import pytest
from django.core import mail
from django.db import connection

from accounts.models import ApiToken
from accounts.tokens import token_create
from bots import play_to_end, services
from bots.models import Bot
from cardkit import make_server
from cardserver.celery import eager_tasks
from games.models import Match
from games.seating import SeatHolder
from games.services import match_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def author(client, user_factory):
    user = user_factory(username="ada", email="ada@example.org")
    client.force_login(user)
    return user


@pytest.fixture
def kit_bot():
    """Return ``start(secret) -> url``: the kit's bot server on 127.0.0.1, playing the
    first legal move."""
    servers = []

    def start(secret: str) -> str:
        server = make_server(lambda view, legal: legal[0], 0, secret)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def http_bot(owner, url: str, name: str = "mybot", secret: str = "s3cret") -> Bot:
    return Bot.objects.create(
        name=name, owner=owner, kind=Bot.Kind.HTTP, url=url, secret=secret, games=["durak"]
    )


def played_match(bot: Bot, opponent: Bot) -> Match:
    """Play a Durak deal of ``bot`` against ``opponent`` to its end, calls made inline."""
    match = match_create(
        creator=bot.owner, game="durak", players=2,
        seats=[SeatHolder(bot=bot), SeatHolder(bot=opponent)], notify=False,
    )  # fmt: skip
    play_to_end.match_play_to_end(match_id=match.pk)
    match.refresh_from_db()
    return match


# --- My bots ----------------------------------------------------------------------------


def test_my_bots_needs_a_signed_in_user(client):
    answer = client.get("/me/bots/")

    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_a_bot_registered_on_the_page_shows_its_secret_once(client, author, kit_bot):
    url = kit_bot("unused")

    answer = client.post(
        "/me/bots/", {"name": "webbot", "kind": "http", "games": ["durak"], "url": url}
    )

    bot = Bot.objects.get(name="webbot")
    assert answer.status_code == 200 and bot.owner == author
    assert bot.secret in answer.content.decode()
    assert "no-store" in answer["Cache-Control"]
    assert bot.secret not in client.get("/me/bots/webbot/").content.decode()
    assert bot.secret not in client.get("/me/bots/").content.decode()


def test_a_client_bot_registered_on_the_page_shows_its_token_once(client, author):
    answer = client.post("/me/bots/", {"name": "cbot", "kind": "client", "games": ["durak"]})

    token = answer.content.decode().split('id="credential">')[1].split("<")[0]
    bot = Bot.objects.get(name="cbot")
    assert ApiToken.objects.filter(user=bot.account).count() == 1
    assert client.get("/api/v1/accounts/tokens/", HTTP_AUTHORIZATION=f"Token {token}").json()[0][
        "name"
    ] == services.CLIENT_TOKEN_NAME


def test_a_registration_with_a_taken_name_says_so_and_creates_nothing(client, author):
    Bot.objects.create(name="taken", owner=author, kind="client", games=["durak"])

    answer = client.post("/me/bots/", {"name": "taken", "kind": "client", "games": ["durak"]})

    assert "A bot with this name already exists." in answer.content.decode()
    assert Bot.objects.filter(name__iexact="taken").count() == 1


def test_the_owner_edits_pauses_resumes_and_starts_a_version(client, author):
    bot = Bot.objects.create(name="mine", owner=author, kind="client", games=["durak"])
    services.versions.bot_version_first(bot=bot)

    client.post("/me/bots/mine/edit/", {"games": ["durak", "volynshchik"], "description": "d"})
    client.post("/me/bots/mine/pause/")
    paused = Bot.objects.get(pk=bot.pk)
    client.post("/me/bots/mine/resume/")
    client.post("/me/bots/mine/versions/", {"label": "v2"})
    again = client.post("/me/bots/mine/versions/", {"label": "v2"})

    bot.refresh_from_db()
    assert bot.games == ["durak", "volynshchik"] and bot.description == "d"
    assert not paused.enabled and bot.enabled
    assert bot.version.label == "v2"
    assert again.status_code == 400


def test_rotating_the_secret_shows_the_new_one_once_and_stores_it_encrypted(
    client, author, kit_bot
):
    bot = http_bot(author, kit_bot("s3cret"))

    answer = client.post("/me/bots/mybot/rotate/")

    bot.refresh_from_db()
    assert bot.secret != "s3cret" and bot.secret in answer.content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM bots_bot WHERE id = %s", [bot.pk])
        assert bot.secret not in cursor.fetchone()[0]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/me/bots/theirs/"),
        ("post", "/me/bots/theirs/edit/"),
        ("post", "/me/bots/theirs/pause/"),
        ("post", "/me/bots/theirs/versions/"),
        ("post", "/me/bots/theirs/rotate/"),
    ],
)
def test_another_users_bot_answers_404_and_is_left_alone(
    client, author, user_factory, method, path
):
    Bot.objects.create(
        name="theirs", owner=user_factory(), kind="http", url="http://127.0.0.1:1/",
        secret="kept", games=["durak"],
    )  # fmt: skip

    answer = getattr(client, method)(path, {"games": ["durak"], "label": "x"})

    bot = Bot.objects.get(name="theirs")
    assert answer.status_code == 404
    assert bot.enabled and bot.secret == "kept" and bot.games == ["durak"]


# --- API tokens -------------------------------------------------------------------------


def test_a_token_made_on_the_page_is_shown_once_listed_by_prefix_and_revoked(client, author):
    made = client.post("/me/tokens/", {"name": "laptop"}).content.decode()
    key = made.split('id="new-token">')[1].split("<")[0]
    token = ApiToken.objects.get(user=author, name="laptop")

    listed = client.get("/me/tokens/").content.decode()
    revoked = client.post(f"/me/tokens/{token.pk}/revoke/")

    assert key.startswith(token.prefix) and token.prefix in listed and key not in listed
    assert revoked.status_code == 302
    assert not ApiToken.objects.filter(pk=token.pk).exists()


def test_revoking_another_users_token_answers_404(client, author, user_factory):
    theirs, _key = token_create(user=user_factory())

    assert client.post(f"/me/tokens/{theirs.pk}/revoke/").status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


# --- Call logs --------------------------------------------------------------------------


def test_the_call_log_lists_each_call_with_latency_status_and_answer(client, author, kit_bot):
    bot = http_bot(author, kit_bot("s3cret"))
    match = played_match(bot, services.builtin_bots_ensure()[0])
    seat = match.seats.get(bot=bot).index
    moves = list(match.moves.filter(seat=seat).order_by("ply"))

    page = client.get(f"/me/bots/mybot/matches/{match.pk}/calls/")
    download = client.get(f"/me/bots/mybot/matches/{match.pk}/calls.jsonl")

    lines = [json.loads(line) for line in download.content.decode().splitlines()]
    assert page.status_code == 200 and download.status_code == 200
    assert "attachment" in download["Content-Disposition"]
    assert [line["ply"] for line in lines] == [move.ply for move in moves] != []
    assert all(line["status"] == "ok" and line["latency_ms"] >= 0 for line in lines)
    assert [line["answer"] for line in lines] == [move.move for move in moves]
    assert all(set(line) >= {"sent_at", "error", "comment"} for line in lines)
    assert f"{lines[0]['latency_ms']} ms" in page.content.decode()


def test_a_call_that_forfeited_shows_its_fault(client, author):
    # Nothing listens on port 1: the call fails to connect and the seat forfeits.
    bot = http_bot(author, "http://127.0.0.1:1/")
    match = played_match(bot, services.builtin_bots_ensure()[0])

    lines = [
        json.loads(line)
        for line in client.get(f"/me/bots/mybot/matches/{match.pk}/calls.jsonl")
        .content.decode()
        .splitlines()
    ]

    assert match.forfeit_seat == match.seats.get(bot=bot).index
    assert lines[-1]["status"] == "connection_error" and lines[-1]["error"]
    assert lines[-1]["answer"] is None


def test_a_sealed_matchs_call_log_withholds_the_answers_until_its_group_unseals(
    client, author, kit_bot
):
    bot = http_bot(author, kit_bot("s3cret"))
    match = played_match(bot, services.builtin_bots_ensure()[0])
    # Its deck is dealt again in a match of its group still to be played (games.sealing).
    Match.objects.filter(pk=match.pk).update(sealed=True)

    lines = [
        json.loads(line)
        for line in client.get(f"/me/bots/mybot/matches/{match.pk}/calls.jsonl")
        .content.decode()
        .splitlines()
    ]

    assert lines and all(line["answer"] is None for line in lines)
    assert all(line["latency_ms"] >= 0 for line in lines)


@pytest.mark.parametrize("who", ["anonymous", "another user", "the opponent's owner"])
def test_a_call_log_is_404_to_anyone_but_the_owner(client, author, user_factory, who):
    bot = http_bot(author, "http://127.0.0.1:1/")
    opponent = Bot.objects.create(
        name="other", owner=user_factory(), kind="builtin", builtin="random", games=["durak"]
    )
    match = played_match(bot, opponent)
    client.logout()
    if who == "another user":
        client.force_login(user_factory())
    elif who == "the opponent's owner":
        client.force_login(opponent.owner)

    for suffix in ("calls/", "calls.jsonl"):
        assert client.get(f"/me/bots/mybot/matches/{match.pk}/{suffix}").status_code == 404
    if who == "the opponent's owner":
        # Their own bot's log is theirs; this bot's is not.
        assert client.get(f"/me/bots/other/matches/{match.pk}/calls/").status_code == 200


def test_a_call_log_of_a_match_the_bot_did_not_play_is_404(client, author):
    http_bot(author, "http://127.0.0.1:1/")
    builtins = services.builtin_bots_ensure()
    match = match_create(
        creator=None, game="durak", players=2, notify=False, by_arena=True,
        seats=[SeatHolder(bot=builtins[0]), SeatHolder(bot=builtins[1])],
    )  # fmt: skip

    assert client.get(f"/me/bots/mybot/matches/{match.pk}/calls/").status_code == 404


# --- Pauses -----------------------------------------------------------------------------


def test_an_unhealthy_bot_page_says_why_and_since_when_and_the_owner_is_mailed_once(
    client, author, settings, django_capture_on_commit_callbacks
):
    bot = http_bot(author, "http://127.0.0.1:1/")

    with eager_tasks(), django_capture_on_commit_callbacks(execute=True):
        for _ in range(settings.BOTS_UNHEALTHY_AFTER + 2):
            services.bot_health_record(bot_id=bot.pk, ok=False, reason="timeout (5 s)")

    bot.refresh_from_db()
    page = client.get("/bots/mybot/").content.decode()
    own_page = client.get("/me/bots/mybot/").content.decode()
    assert not bot.healthy and bot.unhealthy_since is not None
    for shown in (page, own_page):
        assert "The arena paused mybot" in shown and "timeout (5 s)" in shown
        assert f'datetime="{bot.unhealthy_since.isoformat()}"' in shown
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["ada@example.org"] and "mybot" in mail.outbox[0].subject
    assert "timeout (5 s)" in mail.outbox[0].body
    assert f"{settings.SITE_URL}/me/bots/mybot/" in mail.outbox[0].body


def test_a_good_answer_clears_the_pause_notice(client, author, settings):
    bot = http_bot(author, "http://127.0.0.1:1/")
    for _ in range(settings.BOTS_UNHEALTHY_AFTER):
        services.bot_health_record(bot_id=bot.pk, ok=False, reason="timeout")

    services.bot_health_record(bot_id=bot.pk, ok=True)

    bot.refresh_from_db()
    assert bot.healthy and bot.unhealthy_since is None and bot.unhealthy_reason == ""
    assert "The arena paused" not in client.get("/me/bots/mybot/").content.decode()


def test_no_mail_is_sent_when_the_pause_is_rolled_back(author, settings):
    from django.db import transaction

    bot = http_bot(author, "http://127.0.0.1:1/")

    with eager_tasks():
        try:
            with transaction.atomic():
                for _ in range(settings.BOTS_UNHEALTHY_AFTER):
                    services.bot_health_record(bot_id=bot.pk, ok=False)
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass

    assert mail.outbox == []


# --- Profiles ---------------------------------------------------------------------------


def test_an_owner_name_links_to_a_profile_listing_their_bots(client, author):
    Bot.objects.create(name="first", owner=author, kind="client", games=["durak"])
    Bot.objects.create(name="second", owner=author, kind="client", games=["volynshchik"])

    bot_page = client.get("/bots/first/").content.decode()
    profile = client.get("/users/ada/")

    assert 'href="/users/ada/"' in bot_page
    assert profile.status_code == 200
    assert "first" in profile.content.decode() and "second" in profile.content.decode()
    assert client.get("/users/nobody-here/").status_code == 404


def test_a_good_ping_from_the_page_makes_an_unhealthy_bot_healthy(
    client, author, kit_bot, settings
):
    bot = http_bot(author, kit_bot("s3cret"))
    for _ in range(settings.BOTS_UNHEALTHY_AFTER):
        services.bot_health_record(bot_id=bot.pk, ok=False, reason="timeout")

    answer = client.post("/me/bots/mybot/ping/", follow=True)

    bot.refresh_from_db()
    assert bot.healthy and bot.unhealthy_since is None
    assert "answered the ping" in answer.content.decode()
