"""The edges of the site: a skip link, the footer's way to the API docs, form hints."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

pytestmark = pytest.mark.django_db


def test_every_page_starts_with_a_skip_link_to_the_main_content(client):
    page = client.get("/matches/").content.decode()

    assert page.index('class="skip-link" href="#main"') < page.index("<header")
    assert '<main id="main"' in page


def test_footer_links_to_the_api_docs(client):
    page = client.get("/matches/").content.decode()

    assert 'href="/api/v1/docs/">OpenAPI docs</a>' in page


def test_signup_form_tells_password_managers_its_fields(client):
    page = client.get("/accounts/signup/").content.decode()

    assert 'autocomplete="username"' in page
    assert 'autocomplete="new-password"' in page


def test_login_form_tells_password_managers_its_fields(client):
    page = client.get("/accounts/login/").content.decode()

    assert 'autocomplete="username"' in page
    assert 'autocomplete="current-password"' in page


def test_archive_dates_carry_their_year_and_time_zone(client, demo):
    page = client.get("/matches/").content.decode()
    match = demo.rated[0]
    moment = match.finished_at.astimezone(UTC)

    assert f'<time datetime="{moment.isoformat()}">' in page
    assert moment.strftime("%b %-d, %Y, %H:%M UTC") in page


def test_when_writes_nothing_for_a_missing_moment():
    from web.templatetags.arena import when

    assert when(None) == ""
    assert "UTC" in when(datetime(2026, 12, 6, 11, 39, tzinfo=UTC))


def test_the_loser_mark_has_a_legend_and_words_for_screen_readers(client, demo):
    page = client.get("/matches/").content.decode()

    assert 'class="legend' in page and "lost the match" in page
    assert '<span class="visually-hidden"> (lost)</span>' in page
