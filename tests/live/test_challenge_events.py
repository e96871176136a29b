"""A challenge reaches the challenged client bot's account stream as it is made, and the
bot answers it through the API, as a Lichess bot does (bots.challenges); its expiry
reaches it too; on each hub."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from accounts.tokens import token_create
from bots import services
from bots.challenges import challenges_expire
from bots.models import Challenge
from tests.live.server import headers_for, open_stream

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_client_bot_hears_a_challenge_on_its_account_stream_and_accepts_it(
    server, user_factory
):
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    alice_token = token_create(user=alice)[1]
    _bot, bot_token = services.bot_register(
        owner=bob, name="clientbot", kind="client", games=["durak"]
    )
    with httpx.Client(base_url=server.url, timeout=15) as client, open_stream(
        client, "/api/v1/stream/events/", token=bot_token, ndjson=True
    ) as stream:
        made = client.post(
            "/api/v1/challenges/", headers=headers_for(alice_token),
            json={"bot": "clientbot", "game": "durak", "move_time_limit": 30},
        )  # fmt: skip
        assert made.status_code == 201, made.text
        heard = stream.next()
        assert heard["event"] == "challenge"
        assert (heard["data"]["id"], heard["data"]["status"]) == (made.json()["id"], "pending")

        accepted = client.post(
            f"/api/v1/challenges/{heard['data']['id']}/accept/", headers=headers_for(bot_token)
        )
        assert accepted.status_code == 200, accepted.text
        match_id = accepted.json()["match"]
        # The match's events come first: its start is announced before the answer.
        after = stream.until("challenge", limit=5)

    by_event = {event["event"]: event["data"] for event in after}
    assert by_event["challenge"]["status"] == "accepted"
    assert by_event["challenge"]["match"] == match_id
    assert by_event["match_started"]["match"] == match_id
    assert by_event["match_started"]["your_seats"] == [1]
    assert [event["event"] for event in after].count("challenge") == 1


def test_the_bot_hears_its_challenge_expire_on_its_account_stream(server, user_factory):
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    _bot, bot_token = services.bot_register(
        owner=bob, name="clientbot", kind="client", games=["durak"]
    )
    with httpx.Client(base_url=server.url, timeout=15) as client, open_stream(
        client, "/api/v1/stream/events/", token=bot_token, ndjson=True
    ) as stream:
        made = client.post(
            "/api/v1/challenges/", headers=headers_for(token_create(user=alice)[1]),
            json={"bot": "clientbot", "game": "durak", "move_time_limit": 30},
        ).json()  # fmt: skip
        assert stream.next()["data"]["status"] == "pending"
        Challenge.objects.filter(pk=made["id"]).update(
            created_at=timezone.now() - timedelta(hours=1)
        )

        assert challenges_expire() == [made["id"]]
        heard = stream.until("challenge", limit=5)[-1]

    assert (heard["data"]["id"], heard["data"]["status"]) == (made["id"], "expired")
    assert heard["data"]["reason"] == "No answer within 10 minutes."
