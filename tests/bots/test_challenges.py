"""Challenges through the API: asking another owner's bot for a match, with its owner's
consent (policies, accept, decline, cancel, lists, rate limit, the account stream).

On SQLite, and on PostgreSQL when ``DATABASE_URL`` names it (the PostgreSQL pass); the
match an accepted challenge makes is played by a Celery worker in test_worker.py's way
in ``test_an_accepted_challenge_is_played_by_a_worker``.
"""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from bots import driver, services
from bots.models import Bot, Challenge
from games.models import Match
from tests.bots.arena_matches import assert_finished_by_the_rules
from tests.bots.conftest import client_of

pytestmark = pytest.mark.django_db


def challenge(client, **body):
    body = {"bot": "bobbot", "game": "durak", "move_time_limit": 5} | body
    return client.post("/api/v1/challenges/", body, format="json")


def stream_body(response) -> bytes:
    """The body of a streamed answer (an async iterator under the test client)."""
    from asgiref.sync import async_to_sync

    async def read() -> list[bytes]:
        return [chunk async for chunk in response.streaming_content]

    return b"".join(async_to_sync(read)())


def set_policy(bot: Bot, policy: str) -> None:
    Bot.objects.filter(pk=bot.pk).update(challenge_policy=policy)


# --- Asking -----------------------------------------------------------------------------


def test_a_manual_bot_s_challenge_waits_and_makes_no_match(as_alice, bobs_bot):
    response = challenge(as_alice)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["status"], body["bot"], body["challenger"], body["match"]) == (
        "pending", "bobbot", "alice", None
    )
    assert body["seats"] == [{"user": "alice"}, {"bot": "bobbot", "kind": "http"}]
    assert not Match.objects.exists()


def test_challenges_are_listed_to_their_challenger_and_the_bot_s_owner_only(
    as_alice, as_bob, bobs_bot, user_factory
):
    made = challenge(as_alice).json()
    stranger = client_of(user_factory())

    assert [c["id"] for c in as_alice.get("/api/v1/challenges/?role=made").json()["results"]] == [
        made["id"]
    ]
    assert as_alice.get("/api/v1/challenges/?role=received").json()["results"] == []
    received = as_bob.get("/api/v1/challenges/?role=received&status=pending").json()
    assert [c["id"] for c in received["results"]] == [made["id"]]
    assert stranger.get("/api/v1/challenges/").json()["results"] == []
    assert stranger.get(f"/api/v1/challenges/{made['id']}/").status_code == 404
    assert APIClient().get("/api/v1/challenges/").status_code == 401


def test_accept_all_makes_an_unrated_match_at_once(as_alice, bobs_bot, builtin):
    set_policy(bobs_bot, "accept_all")

    body = challenge(as_alice, seats=[{"bot": "bobbot"}, {"bot": "random"}]).json()

    assert body["status"] == "accepted" and body["answered_by"] is None
    match = Match.objects.get(pk=body["match"])
    assert (match.status, match.rated) == (Match.Status.ACTIVE, False)
    assert [s.bot_id for s in match.seats.order_by("index")] == [bobs_bot.pk, builtin["random"].pk]


def test_builtin_only_accepts_a_table_of_built_in_bots(as_alice, bobs_bot, builtin):
    set_policy(bobs_bot, "builtin_only")

    body = challenge(as_alice, seats=[{"bot": "greedy"}, {"bot": "bobbot"}]).json()

    assert body["status"] == "accepted"
    assert Match.objects.filter(pk=body["match"]).exists()


def test_builtin_only_declines_a_challenger_in_person_or_with_their_own_bot(
    as_alice, alice, bobs_bot
):
    set_policy(bobs_bot, "builtin_only")
    services.bot_register(owner=alice, name="alicebot", kind="client", games=["durak"])

    in_person = challenge(as_alice).json()
    with_bot = challenge(as_alice, seats=[{"bot": "alicebot"}, {"bot": "bobbot"}]).json()

    for body in (in_person, with_bot):
        assert body["status"] == "declined"
        assert "built-in" in body["reason"]
    assert not Match.objects.exists()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"bot": "nobody"}, "No bot named"),
        ({"bot": "random"}, "built-in bot, which anyone may seat"),
        ({"players": 3}, "Give the seats"),
        ({"seats": [{"user": "alice"}, {"bot": "random"}]}, "exactly once"),
        ({"seats": [{"user": "bob"}, {"bot": "bobbot"}]}, "yourself or bots"),
        ({"seats": [{"bot": "bobbot"}, {"bot": "bobbot"}]}, "exactly once"),
        ({"game": "chess"}, "valid choice"),
        ({"move_time_limit": 0}, "greater than or equal"),
        ({"players": 5, "seats": [{"bot": "bobbot"}] + [{"bot": "random"}] * 4}, "players"),
    ],
)
def test_a_challenge_that_is_not_a_match_is_refused_with_a_400(
    as_alice, bobs_bot, builtin, body, fragment
):
    response = challenge(as_alice, **body)

    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "invalid"
    assert fragment in json.dumps(response.json())
    assert not Challenge.objects.exists()


def test_a_bot_of_a_third_owner_cannot_be_seated_in_a_challenge(
    as_alice, bobs_bot, user_factory
):
    services.bot_register(owner=user_factory(), name="carolbot", kind="client", games=["durak"])

    response = challenge(as_alice, seats=[{"bot": "carolbot"}, {"bot": "bobbot"}])

    assert response.status_code == 400
    assert "you can seat only your own bots" in response.json()["error"]["message"]


def test_challenging_your_own_bot_is_refused(as_bob, bobs_bot):
    response = challenge(as_bob, seats=[{"bot": "greedy"}, {"bot": "bobbot"}])

    assert response.status_code == 400
    assert "your own bot" in response.json()["error"]["message"]


# --- Answering ----------------------------------------------------------------------------


def test_the_owner_accepts_and_the_match_is_played_to_its_end_with_the_http_bot(
    as_alice, as_bob, bobs_bot, builtin
):
    made = challenge(as_alice, seats=[{"bot": "greedy"}, {"bot": "bobbot"}]).json()

    response = as_bob.post(f"/api/v1/challenges/{made['id']}/accept/")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["status"], body["answered_by"]) == ("accepted", "bob")
    match = Match.objects.get(pk=body["match"])
    assert not match.rated and match.created_by.username == "alice"
    driver.bot_turns_play(match_id=match.pk)
    assert_finished_by_the_rules(match)
    assert match.moves.filter(seat=1).exists()  # bobbot answered over HTTP


def test_a_client_bot_accepts_its_own_challenge_with_its_token(as_alice, bob, builtin):
    bot, token = services.bot_register(owner=bob, name="clientbot", kind="client",
                                       games=["durak"])  # fmt: skip
    made = challenge(as_alice, bot="clientbot",
                     seats=[{"bot": "clientbot"}, {"bot": "random"}]).json()  # fmt: skip
    as_bot = APIClient()
    as_bot.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    listed = as_bot.get("/api/v1/challenges/?role=received").json()["results"]
    response = as_bot.post(f"/api/v1/challenges/{made['id']}/accept/")

    assert [c["id"] for c in listed] == [made["id"]]
    assert response.status_code == 200
    assert response.json()["answered_by"] == bot.account.username
    match = Match.objects.get(pk=response.json()["match"])
    assert match.seats.get(index=0).bot_id == bot.pk


def test_the_owner_declines_with_a_reason_and_no_match_is_made(as_alice, as_bob, bobs_bot):
    made = challenge(as_alice).json()

    response = as_bob.post(
        f"/api/v1/challenges/{made['id']}/decline/", {"reason": "not today"}, format="json"
    )

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["reason"]) == ("declined", "not today")
    assert not Match.objects.exists()


def test_only_the_bot_s_owner_may_answer_and_only_the_challenger_may_cancel(
    as_alice, as_bob, bobs_bot
):
    made = challenge(as_alice).json()
    base = f"/api/v1/challenges/{made['id']}"

    accept = as_alice.post(f"{base}/accept/")
    decline = as_alice.post(f"{base}/decline/")
    cancel = as_bob.post(f"{base}/cancel/")

    assert (accept.status_code, accept.json()["error"]["code"]) == (403, "not_bot_owner")
    assert decline.status_code == 403
    assert (cancel.status_code, cancel.json()["error"]["code"]) == (403, "not_challenger")
    assert Challenge.objects.get().status == Challenge.Status.PENDING


def test_the_challenger_cancels_while_it_waits_and_then_it_cannot_be_accepted(
    as_alice, as_bob, bobs_bot
):
    made = challenge(as_alice).json()
    base = f"/api/v1/challenges/{made['id']}"

    cancelled = as_alice.post(f"{base}/cancel/")
    accept = as_bob.post(f"{base}/accept/")
    again = as_alice.post(f"{base}/cancel/")

    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert accept.status_code == 409
    assert accept.json()["error"] == {
        "code": "challenge_not_pending",
        "message": "The challenge is cancelled: it is no longer waiting.",
        "detail": {"status": "cancelled"},
    }
    assert again.status_code == 409
    assert not Match.objects.exists()


def test_an_accepted_challenge_cannot_be_cancelled_or_accepted_again(as_alice, as_bob, bobs_bot):
    made = challenge(as_alice).json()
    base = f"/api/v1/challenges/{made['id']}"
    as_bob.post(f"{base}/accept/")

    assert as_alice.post(f"{base}/cancel/").status_code == 409
    assert as_bob.post(f"{base}/accept/").status_code == 409
    assert Match.objects.count() == 1


def test_accepting_when_the_match_cannot_be_made_leaves_the_challenge_waiting(
    as_alice, as_bob, bobs_bot
):
    made = challenge(as_alice).json()
    Bot.objects.filter(pk=bobs_bot.pk).update(enabled=False)

    response = as_bob.post(f"/api/v1/challenges/{made['id']}/accept/")

    assert response.status_code == 400
    assert "disabled" in response.json()["error"]["message"]
    assert Challenge.objects.get().status == Challenge.Status.PENDING


# --- Limits -------------------------------------------------------------------------------


def test_challenges_are_rate_limited_per_user(as_alice, as_bob, bobs_bot, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "challenge": "2/hour"}

    answers = [challenge(as_alice).status_code for _ in range(3)]
    others = challenge(as_bob, bot="bobbot").status_code  # bob's own: a 400, still counted

    assert answers == [201, 201, 429]
    assert others == 400
    limited = challenge(as_alice)
    assert limited.json()["error"]["code"] == "throttled"
    assert int(limited["Retry-After"]) > 0


def test_pending_challenges_are_capped_per_challenger(as_alice, bobs_bot, settings):
    settings.CHALLENGES_MAX_PENDING = 2

    answers = [challenge(as_alice) for _ in range(3)]

    assert [a.status_code for a in answers] == [201, 201, 409]
    assert answers[2].json()["error"]["code"] == "too_many_challenges"
    assert answers[2].json()["error"]["detail"] == {"pending": 2, "limit": 2}


# --- The policy and the account stream ----------------------------------------------------


def test_the_owner_sets_the_policy_through_the_bot_api(as_bob, bobs_bot):
    response = as_bob.patch(
        "/api/v1/bots/bobbot/", {"challenge_policy": "accept_all"}, format="json"
    )
    refused = as_bob.patch("/api/v1/bots/bobbot/", {"challenge_policy": "sure"}, format="json")

    assert response.status_code == 200 and response.json()["challenge_policy"] == "accept_all"
    assert refused.status_code == 400
    bobs_bot.refresh_from_db()
    assert bobs_bot.challenge_policy == "accept_all"


def test_a_waiting_challenge_is_on_the_client_bot_s_account_stream(as_alice, bob):
    _bot, token = services.bot_register(owner=bob, name="clientbot", kind="client",
                                        games=["durak"])  # fmt: skip
    made = challenge(as_alice, bot="clientbot").json()
    as_bot = APIClient()
    as_bot.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    # Served by the test client, the stream answers what there is now and ends.
    response = as_bot.get("/api/v1/stream/events/", HTTP_ACCEPT="application/x-ndjson")
    events = [json.loads(line) for line in stream_body(response).splitlines() if line.strip()]

    assert [(e["event"], e["data"]["id"], e["data"]["status"]) for e in events] == [
        ("challenge", made["id"], "pending")
    ]
    assert events[0]["data"]["seats"] == [{"user": "alice"}, {"bot": "clientbot", "kind": "client"}]


def test_a_challenge_is_shown_on_the_pages_of_both_bots(client, as_alice, alice, bobs_bot):
    services.bot_register(owner=alice, name="alicebot", kind="client", games=["durak"])
    made = challenge(as_alice, seats=[{"bot": "alicebot"}, {"bot": "bobbot"}]).json()

    pages = {name: client.get(f"/bots/{name}/") for name in ("bobbot", "alicebot")}

    for name, page in pages.items():
        assert page.status_code == 200, name
        html = page.content.decode()
        assert f"#{made['id']}" in html and "alicebot · bobbot" in html and "pending" in html
    assert "to this bot" in pages["bobbot"].content.decode()
    assert "to this bot" not in pages["alicebot"].content.decode()
    assert "Policy: Its owner (or the bot" in pages["bobbot"].content.decode()


# --- Played by a worker ---------------------------------------------------------------------


@pytest.mark.real_services
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_accepted_challenge_is_played_by_a_worker(tmp_path, as_alice, as_bob, bobs_bot):
    """The match of an accepted challenge is a match like any other: a Celery worker
    process plays its HTTP and built-in bots to the end."""
    import os
    import uuid

    from bots.tasks import play_bot_turns
    from tests.matches import wait_while_active
    from tests.processes import start_solo_worker, worker_database_url

    services.builtin_bots_ensure()
    made = challenge(as_alice, seats=[{"bot": "greedy"}, {"bot": "bobbot"}]).json()
    match_id = as_bob.post(f"/api/v1/challenges/{made['id']}/accept/").json()["match"]
    # A queue of its own keeps this worker away from every other message on the broker.
    queue = f"test-challenges-{uuid.uuid4().hex}"
    environment = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "DATABASE_URL": worker_database_url(),
        "CARDSERVER_VAR_DIR": str(tmp_path / "var"),
    }
    worker = start_solo_worker(queue, environment)
    try:
        play_bot_turns.apply_async((match_id,), queue=queue)
        match = wait_while_active(Match.objects.get(pk=match_id))
    finally:
        worker.terminate()
        _, worker_errors = worker.communicate(timeout=60)

    assert match.status == Match.Status.FINISHED, worker_errors
    assert_finished_by_the_rules(match)
    assert match.moves.filter(seat=1).exists()
