"""The hub's Redis subscriptions: one channel per key its waiters follow, and no other.

Each test starts uvicorn on ``cardserver.asgi`` in this process (tests/live/server.py),
so it can look at the process's hub, and asks the real Redis what the hub's connection
is subscribed to (``PUBSUB NUMSUB``, ``CLIENT LIST``). A process that pattern-subscribed
to every key received and parsed every move of the arena, whoever followed it.
"""

from __future__ import annotations

import asyncio
import random
import threading

import httpx
import pytest
import redis
from django.conf import settings
from django.test import override_settings

from accounts.tokens import token_create
from benchmarks.harness import wait_until
from games import live, live_redis
from games.models import Match
from games.move_services import match_move_submit
from games.selectors import match_state
from tests.live.server import LiveServer, open_stream
from tests.matches import start_match

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def server():
    with LiveServer() as running:
        yield running


@pytest.fixture
def users(user_factory):
    return [user_factory(username=f"s{i}") for i in range(2)]


@pytest.fixture
def pubsub_redis():
    client = redis.Redis.from_url(settings.LIVE_PUBSUB_URL)
    yield client
    client.close()


def subscribers(client: redis.Redis, key: str) -> int:
    """How many connections are subscribed to ``key``'s channel (any process)."""
    channel = live.channel_prefix() + key
    return dict(client.pubsub_numsub(channel)).get(channel.encode(), 0)


def hub_client(client: redis.Redis) -> dict:
    """The connection of the hub of the test's server, as ``CLIENT LIST`` shows it (the
    session's live server, started by the browser tests, has a hub of its own)."""
    name = live_redis.hub_client_name(live.channel_prefix(), live._hub.redis.number)
    found = [entry for entry in client.client_list() if entry["name"] == name]
    assert len(found) == 1, found
    return found[0]


def play_one(match: Match, seed: int = 1) -> int:
    """Commit one random legal move (as a worker would: not through the web process)."""
    match.refresh_from_db()
    move = random.Random(seed + match.ply).choice(match_state(match).legal_moves())
    match_move_submit(match_id=match.pk, seat=match.to_move, ply=match.ply, move=move)
    return match.ply + 1


def test_a_stream_opened_as_a_move_commits_on_a_key_with_no_subscription_sees_the_move(
    server, users, pubsub_redis
):
    """Each round a new match, so its key has no subscription yet: the stream's first read
    must wait for Redis to confirm it, or a move committed in between is never told."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for round_ in range(30):
            match = start_match(users)
            key = live.match_key(match.pk)
            assert subscribers(pubsub_redis, key) == 0
            moved = threading.Thread(target=play_one, args=(match, round_))
            with open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as reader:
                moved.start()  # races the stream's subscribe, its confirmation and its read
                event = reader.next()
                if event["data"]["ply"] == 0:
                    event = reader.until("state")[-1]
                moved.join()
                assert event["data"]["ply"] == 1, round_


def test_a_stream_opened_while_the_hub_reconnects_sees_a_move_made_before_it_is_subscribed(
    server, users, pubsub_redis
):
    """The hub's connection is killed (it reconnects after 0.1 s) and a stream opens on a
    new match, whose move commits at once: published before any connection of the hub is
    subscribed to that match, it is heard by no one. The stream must still show it."""
    followed = start_match(users)
    with (
        httpx.Client(base_url=server.url, timeout=10) as client,
        open_stream(client, f"/api/v1/matches/{followed.pk}/stream/") as reader,
    ):
        assert reader.next()["data"]["ply"] == 0  # the hub is up
        for round_ in range(5):
            match = start_match(users)
            pubsub_redis.client_kill_filter(_id=hub_client(pubsub_redis)["id"])
            with open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as new:
                play_one(match, round_)
                event = new.next()
                if event["data"]["ply"] == 0:
                    event = new.until("state")[-1]
                assert event["data"]["ply"] == 1, round_
                # Subscribed on the new connection (not noted as sent on the lost one).
                wait_until(
                    lambda match=match: subscribers(pubsub_redis, live.match_key(match.pk)) == 1,
                    timeout=10, what="the new match's key subscribed",
                )  # fmt: skip
            wait_until(
                lambda: subscribers(pubsub_redis, live.match_key(followed.pk)) == 1,
                timeout=10, what="the hub back",
            )  # fmt: skip


def test_a_process_is_sent_nothing_of_a_match_none_of_its_waiters_follows(
    server, users, user_factory, pubsub_redis
):
    followed = start_match(users)
    others = start_match([user_factory(username="o0"), user_factory(username="o1")])
    with (
        httpx.Client(base_url=server.url, timeout=10) as client,
        open_stream(client, f"/api/v1/matches/{followed.pk}/stream/") as reader,
    ):
        assert reader.next()["data"]["ply"] == 0
        entry = hub_client(pubsub_redis)
        assert (entry["sub"], entry["psub"]) == ("1", "0")  # the followed match's key only
        received = live._hub.messages
        for _ in range(5):
            play_one(others)
        assert subscribers(pubsub_redis, live.match_key(others.pk)) == 0
        play_one(followed)
        # Redis sends a connection's messages in the order they were published: had any
        # of the other match's reached the hub, it would have come before this one.
        assert reader.until("state")[-1]["data"]["ply"] == 1
        assert live._hub.messages == received + 1


@override_settings(LIVE_UNSUBSCRIBE_AFTER=0.2)
def test_a_key_s_subscription_ends_when_its_last_stream_closes(server, users, pubsub_redis):
    match = start_match(users)
    match_key, account_key = live.match_key(match.pk), live.account_key(users[0].pk)
    token = token_create(user=users[0])[1]
    with httpx.Client(base_url=server.url, timeout=10) as client:
        with (
            open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as one,
            open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as two,
            open_stream(client, "/api/v1/stream/events/", token=token) as mine,
        ):
            one.next(), two.next(), mine.next()
            # One subscription a process, however many of its streams follow the key.
            assert subscribers(pubsub_redis, match_key) == 1
            assert subscribers(pubsub_redis, account_key) == 1
        wait_until(
            lambda: subscribers(pubsub_redis, match_key) + subscribers(pubsub_redis, account_key)
            == 0,
            timeout=10, what="the keys unsubscribed",
        )  # fmt: skip
        assert hub_client(pubsub_redis)["sub"] == "0"
        # And subscribed again for the next stream, which is told of the next move.
        with open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as again:
            assert again.next()["data"]["ply"] == 0
            assert subscribers(pubsub_redis, match_key) == 1
            play_one(match)
            assert again.until("state")[-1]["data"]["ply"] == 1


def test_after_a_reconnect_every_stream_reads_again(server, users, pubsub_redis):
    """The hub's connection is killed; a move committed meanwhile is published to no one
    (the publisher is off): the streams learn of it only by reading again once the hub's
    new connection has every key subscribed again."""
    match = start_match(users)
    to_move = match.to_move
    token = token_create(user=users[1 - to_move])[1]  # its turn comes next
    with (
        httpx.Client(base_url=server.url, timeout=10) as client,
        open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as reader,
        open_stream(client, "/api/v1/stream/events/", token=token) as account,
    ):
        assert reader.next()["data"]["ply"] == 0
        assert account.next()["event"] == "match_started"
        killed = hub_client(pubsub_redis)["id"]
        live.live_publish_disconnect()
        try:
            play_one(match)
        finally:
            live.live_publish_connect()
        pubsub_redis.client_kill_filter(_id=killed)
        assert [e["event"] for e in reader.until("state")] == ["move", "state"]
        turn = account.next()
        assert turn["event"] == "your_turn" and turn["data"]["ply"] == 1
        assert hub_client(pubsub_redis)["id"] != killed
        assert subscribers(pubsub_redis, live.match_key(match.pk)) == 1


def test_waiters_registering_at_once_are_subscribed_in_a_few_commands(server, users, pubsub_redis):
    """2,000 keys registered in one turn of the server's loop: Redis is sent one SUBSCRIBE
    per 1,000 of them, not one each (MONITOR shows every command it is sent)."""
    first = 10**9 + random.randrange(10**9)
    keys = [live.match_key(first + i) for i in range(2000)]
    wanted = {live.channel_prefix() + key for key in keys}
    commands: list[list[str]] = []
    monitoring = threading.Event()

    def monitor() -> None:
        with pubsub_redis.monitor() as monitored:
            monitoring.set()
            seen = 0
            for command in monitored.listen():
                words = command["command"].split(" ")
                if words[0] == "SUBSCRIBE" and wanted.intersection(words[1:]):
                    commands.append(words)
                    seen += len(words) - 1
                    if seen >= len(keys):
                        return

    watcher = threading.Thread(target=monitor, daemon=True)
    watcher.start()
    assert monitoring.wait(5)

    async def register() -> bool:
        hub = live.hub()
        waiters = [hub.waiter([key]) for key in keys]
        await asyncio.gather(*(waiter.ready() for waiter in waiters))
        confirmed = hub.confirmed(keys)
        for waiter in waiters:
            waiter.close()
        return confirmed

    match = start_match(users)
    with (
        httpx.Client(base_url=server.url, timeout=10) as client,
        open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as reader,
    ):
        reader.next()  # the server's hub is up, in uvicorn's loop
        loop = live._hub.loop
        assert asyncio.run_coroutine_threadsafe(register(), loop).result(20) is True
    watcher.join(10)
    assert {word for words in commands for word in words[1:]} == wanted
    assert len(commands) == 2
