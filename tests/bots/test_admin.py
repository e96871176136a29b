"""The bots admin: lists bots with their health, never shows a secret, acts in bulk."""

from __future__ import annotations

import pytest

from bots.models import Bot

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, user_factory):
    client.force_login(user_factory(is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def secret_bot(user):
    return Bot.objects.create(
        name="hidden", owner=user, kind="http", url="http://127.0.0.1:9/", secret="s3cret-value",
        games=["durak"], consecutive_failures=2,
    )


def test_changelist_shows_health_and_filters(admin_client, secret_bot):
    response = admin_client.get("/admin/bots/bot/?healthy__exact=1&q=hidd")

    assert response.status_code == 200
    content = response.content.decode()
    assert "hidden" in content
    assert "s3cret-value" not in content


def test_change_form_does_not_show_the_secret(admin_client, secret_bot):
    response = admin_client.get(f"/admin/bots/bot/{secret_bot.pk}/change/")

    assert response.status_code == 200
    assert "s3cret-value" not in response.content.decode()
    assert 'name="secret"' not in response.content.decode()


@pytest.mark.parametrize(("action", "enabled"), [("disable", False), ("enable", True)])
def test_enable_and_disable_actions(admin_client, secret_bot, action, enabled):
    Bot.objects.filter(pk=secret_bot.pk).update(enabled=not enabled)

    response = admin_client.post(
        "/admin/bots/bot/", {"action": action, "_selected_action": [secret_bot.pk]}
    )

    assert response.status_code == 302
    assert Bot.objects.get(pk=secret_bot.pk).enabled is enabled


def test_ping_action_queues_pings_of_http_bots_only(admin_client, secret_bot, monkeypatch):
    from bots import tasks

    queued = []
    monkeypatch.setattr(tasks.ping_bot, "delay", queued.append)
    greedy = Bot.objects.get(name="greedy")

    admin_client.post(
        "/admin/bots/bot/", {"action": "ping", "_selected_action": [secret_bot.pk, greedy.pk]}
    )

    assert queued == [secret_bot.pk]
