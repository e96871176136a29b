"""The admin shows matches and their log, and changes neither."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import RequestFactory

from games.match_endings import match_forfeit
from games.models import Match, Move
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, user_factory):
    client.force_login(user_factory(username="staff", is_staff=True, is_superuser=True))
    return client


def test_move_log_cannot_be_added_to_changed_or_deleted_in_the_admin(user_factory):
    request = RequestFactory().get("/admin/")
    request.user = user_factory(is_staff=True, is_superuser=True)
    move_admin = admin.site._registry[Move]

    assert not move_admin.has_add_permission(request)
    assert not move_admin.has_change_permission(request)
    assert not move_admin.has_delete_permission(request)


def test_matches_are_listed_and_searched_by_player(staff_client, user_factory):
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = start_match([alice, bob])

    listed = staff_client.get("/admin/games/match/", {"q": "alice"})
    missing = staff_client.get("/admin/games/match/", {"q": "nobody"})

    assert f"/admin/games/match/{match.pk}/change/" in listed.content.decode()
    assert f"/admin/games/match/{match.pk}/change/" not in missing.content.decode()


def test_match_in_play_hides_its_seed_and_snapshot(staff_client, user_factory):
    match = play_random_moves(start_match([user_factory(), user_factory()]), 3)

    page = staff_client.get(f"/admin/games/match/{match.pk}/change/").content.decode()

    assert "Seed commitment" in page
    assert match.seed not in page and "Snapshot" not in page


def test_finished_match_shows_its_seed(staff_client, user_factory):
    match = start_match([user_factory(), user_factory()])
    match_forfeit(match_id=match.pk, seat=0, code="resign", detail="test")

    page = staff_client.get(f"/admin/games/match/{match.pk}/change/").content.decode()

    assert Match.objects.get(pk=match.pk).seed in page


def test_match_admin_changes_nothing(staff_client, user_factory):
    match = start_match([user_factory(), user_factory()])

    response = staff_client.post(
        f"/admin/games/match/{match.pk}/change/", {"status": "aborted", "ply": 9}
    )

    match.refresh_from_db()
    assert (match.status, match.ply) == ("active", 0)
    assert response.status_code in (200, 302, 403)
    assert staff_client.get("/admin/games/match/add/").status_code == 403


def test_admin_lists_the_stalled_matches_oldest_first(staff_client, user_factory, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.MATCHES_STALLED_AFTER = 60.0
    now = timezone.now()
    moving, stalled = (start_match([user_factory(), user_factory()]) for _ in range(2))
    Match.objects.filter(pk=stalled.pk).update(
        turn_started_at=now - timedelta(seconds=305), deadline_at=now - timedelta(seconds=300)
    )

    page = staff_client.get("/admin/games/match/", {"progress": "stalled"}).content.decode()

    assert f"/admin/games/match/{stalled.pk}/change/" in page
    assert f"/admin/games/match/{moving.pk}/change/" not in page
