"""The admin: every model is there, and nothing in it can edit a move log."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.contrib import admin

from games.models import Move

pytestmark = pytest.mark.django_db

# Django's own bookkeeping, and models the admin shows through a proxy of their own.
NOT_IN_ADMIN = {
    "admin.LogEntry", "auth.Permission", "contenttypes.ContentType", "sessions.Session",
    "django_celery_beat.PeriodicTasks",
}  # fmt: skip


@pytest.fixture
def admin_client(client, user_factory):
    client.force_login(user_factory(is_staff=True, is_superuser=True))
    return client


def test_every_model_of_the_arena_is_registered():
    missing = {
        model._meta.label
        for model in apps.get_models()
        if model not in admin.site._registry and model._meta.label not in NOT_IN_ADMIN
    }
    assert not missing


def test_every_changelist_and_change_page_opens(admin_client, demo):
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        url = f"/admin/{meta.app_label}/{meta.model_name}/"
        response = admin_client.get(url)
        assert response.status_code == 200, url
        first = model_admin.get_queryset(response.wsgi_request).first()
        if first is not None:
            change = admin_client.get(f"{url}{first.pk}/change/")
            assert change.status_code == 200, f"{url}{first.pk}/change/"


def test_match_list_links_to_the_replay_and_names_the_seats(admin_client, demo):
    match = demo.rated[0]

    response = admin_client.get("/admin/games/match/")

    page = response.content.decode()
    assert f'href="/matches/{match.pk}/">replay</a>' in page
    assert "0: " in page and match.seats.get(index=0).bot.name in page


def test_the_move_log_cannot_be_edited_added_to_or_deleted(admin_client, demo):
    move = Move.objects.filter(match=demo.rated[0]).order_by("ply").first()
    logged = (move.ply, move.seat, move.move)
    url = f"/admin/games/move/{move.pk}/change/"

    page = admin_client.get(url).content.decode()
    assert 'name="move"' not in page and "Save" not in page
    admin_client.post(url, {"move": '{"type": "take"}', "ply": 7, "seat": 1})
    admin_client.post(f"/admin/games/move/{move.pk}/delete/", {"post": "yes"})
    assert admin_client.get("/admin/games/move/add/").status_code == 403
    move.refresh_from_db()
    assert (move.ply, move.seat, move.move) == logged
    model_admin = admin.site._registry[Move]
    assert not model_admin.has_change_permission(None, move)
    assert not model_admin.has_delete_permission(None, move)
    assert not model_admin.has_add_permission(None)


def test_move_list_links_each_move_to_the_replay_after_it(admin_client, demo):
    move = Move.objects.filter(match=demo.rated[0], ply=4).get()

    page = admin_client.get(f"/admin/games/move/?q={move.match_id}").content.decode()

    assert f'href="/matches/{move.match_id}/?ply=5"' in page


def test_seats_are_read_only(admin_client, demo):
    seat = demo.rated[0].seats.first()
    model_admin = admin.site._registry[type(seat)]

    assert not model_admin.has_change_permission(None, seat)
    assert admin_client.get(f"/admin/games/seat/?q={seat.match_id}").status_code == 200


def test_bots_have_health_columns_and_enable_disable_actions(admin_client, demo):
    page = admin_client.get("/admin/bots/bot/").content.decode()

    assert "healthy" in page.lower()
    assert 'value="enable"' in page and 'value="disable"' in page


def test_tournaments_show_progress_with_start_and_cancel(admin_client, demo):
    page = admin_client.get("/admin/tournaments/tournament/").content.decode()

    assert f"{demo.tournament.matches_done} / {demo.tournament.matches_total}" in page
    assert 'value="start"' in page and 'value="cancel"' in page


def test_ratings_are_listed_per_pool_in_leaderboard_order(admin_client, demo):
    response = admin_client.get("/admin/tournaments/rating/?pool=durak-2p")

    ratings = list(response.context["cl"].result_list)
    assert [r.elo for r in ratings] == sorted((r.elo for r in ratings), reverse=True)
    assert {r.pool for r in ratings} == {"durak-2p"}


def test_ladder_schedules_are_periodic_tasks_in_the_admin(admin_client, db):
    assert admin_client.get("/admin/django_celery_beat/periodictask/").status_code == 200


def english_plural(name: str) -> str:
    """The plural English writes for the last word of a model's name."""
    if name.endswith(("ch", "sh", "s", "x")):
        return name + "es"
    if name.endswith("y") and name[-2] not in "aeiou":
        return name[:-1] + "ies"
    return name + "s"


def test_every_model_is_named_in_correct_english_plural():
    wrong = {
        model._meta.label: str(model._meta.verbose_name_plural)
        for model in apps.get_models()
        if model._meta.app_label in ("games", "bots", "tournaments", "accounts")
        and str(model._meta.verbose_name_plural) != english_plural(str(model._meta.verbose_name))
    }
    assert wrong == {}


def test_rating_list_rounds_elo_and_shows_the_fitted_rating_with_its_interval(
    admin_client, demo
):
    from tournaments.models import FitEntry, Rating, RatingFit

    fit = RatingFit.objects.filter(pool="durak-2p").order_by("-fitted_at", "-id").first()
    entry = FitEntry.objects.get(fit=fit, rank=1)
    rating = Rating.objects.get(pool="durak-2p", bot=entry.bot)

    page = admin_client.get("/admin/tournaments/rating/?pool=durak-2p").content.decode()

    assert f"<td class=\"field-elo_rounded\">{rating.elo:.0f}</td>" in page
    assert f"{entry.rating:.0f} ({entry.low:.0f}–{entry.high:.0f})" in page
    assert re.search(r"\b\d+\.\d{4,}\b", page) is None  # no float written to the last digit


def test_admin_pages_of_bots_and_tournaments_link_to_the_site(admin_client, demo):
    from bots.models import Bot
    from tournaments.models import Tournament

    bot = Bot.objects.filter(owner__isnull=False).first() or Bot.objects.first()
    tournament = Tournament.objects.first()

    bot_page = admin_client.get(f"/admin/bots/bot/{bot.pk}/change/").content.decode()
    tournament_page = admin_client.get(
        f"/admin/tournaments/tournament/{tournament.pk}/change/"
    ).content.decode()

    assert "View on site" in bot_page and "View on site" in tournament_page
