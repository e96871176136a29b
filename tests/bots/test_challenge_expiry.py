"""A challenge no one answers within ``CHALLENGES_EXPIRE_AFTER`` expires: beat's sweep
expires it, an answer that comes later finds it expired, and it no longer counts as
waiting (bots.challenges.challenges_expire)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from rest_framework.test import APIClient

from bots import services
from bots import tasks as bot_tasks
from bots.models import Challenge
from games.models import Match
from tests.bots.test_challenges import challenge, stream_body

pytestmark = pytest.mark.django_db


def made_ago(challenge_id: int, seconds: float) -> None:
    Challenge.objects.filter(pk=challenge_id).update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_the_sweep_expires_a_challenge_unanswered_for_ten_minutes_and_no_other(
    as_alice, bobs_bot
):
    old, fresh = challenge(as_alice).json(), challenge(as_alice).json()
    made_ago(old["id"], 601)
    made_ago(fresh["id"], 590)

    expired = bot_tasks.expire_challenges()

    assert expired == 1
    shown = as_alice.get(f"/api/v1/challenges/{old['id']}/").json()
    assert (shown["status"], shown["match"], shown["answered_by"]) == ("expired", None, None)
    assert shown["reason"] == "No answer within 10 minutes."
    assert shown["answered_at"] is not None
    assert Challenge.objects.get(pk=fresh["id"]).status == Challenge.Status.PENDING
    assert bot_tasks.expire_challenges() == 0
    assert not Match.objects.exists()


def test_the_time_a_challenge_waits_is_the_setting(as_alice, bobs_bot, settings):
    settings.CHALLENGES_EXPIRE_AFTER = 30
    made = challenge(as_alice).json()
    made_ago(made["id"], 31)

    bot_tasks.expire_challenges()

    expired = Challenge.objects.get(pk=made["id"])
    assert expired.status == Challenge.Status.EXPIRED
    assert expired.reason == "No answer within 30 seconds."


def test_the_sweep_runs_every_30_seconds_from_celery_beat():
    task = PeriodicTask.objects.get(task="bots.tasks.expire_challenges")

    assert task.enabled and task.interval.period == "seconds" and task.interval.every == 30


def test_an_answer_after_the_time_finds_the_challenge_expired_before_the_sweep(
    as_alice, as_bob, bobs_bot
):
    made = challenge(as_alice).json()
    made_ago(made["id"], 601)

    accept = as_bob.post(f"/api/v1/challenges/{made['id']}/accept/")
    cancel = as_alice.post(f"/api/v1/challenges/{made['id']}/cancel/")

    assert accept.status_code == 409
    assert accept.json()["error"]["detail"] == {"status": "expired"}
    assert cancel.json()["error"]["detail"] == {"status": "expired"}
    assert Challenge.objects.get().status == Challenge.Status.EXPIRED
    assert not Match.objects.exists()


def test_an_overdue_challenge_counts_no_more_against_the_pending_cap(
    as_alice, bobs_bot, settings
):
    settings.CHALLENGES_MAX_PENDING = 1
    first = challenge(as_alice).json()
    made_ago(first["id"], 601)

    second = challenge(as_alice)

    assert second.status_code == 201, second.json()


def test_an_overdue_challenge_is_not_announced_as_waiting_when_the_stream_opens(
    as_alice, bob
):
    _bot, token = services.bot_register(
        owner=bob, name="clientbot", kind="client", games=["durak"]
    )
    old, fresh = challenge(as_alice, bot="clientbot").json(), challenge(
        as_alice, bot="clientbot"
    ).json()
    made_ago(old["id"], 601)
    as_bot = APIClient()
    as_bot.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    response = as_bot.get("/api/v1/stream/events/", HTTP_ACCEPT="application/x-ndjson")
    events = [json.loads(line) for line in stream_body(response).splitlines() if line.strip()]

    assert [(e["event"], e["data"]["id"]) for e in events] == [("challenge", fresh["id"])]
