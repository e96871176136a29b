"""The head-to-head table of a bot's page and the versus page (/bots/<a>/vs/<b>/)."""

from __future__ import annotations

import re

import pytest

from bots.models import Bot
from tests.matches import finished_bot_match

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.fixture
def pair(user_factory):
    owner = user_factory()
    return [
        Bot.objects.create(
            name=name, owner=owner, kind=Bot.Kind.BUILTIN, builtin="random", games=["durak"]
        )
        for name in ("alpha", "beta")
    ]


def test_bot_page_lists_opponents_with_a_link_to_their_matches(client, pair):
    alpha, beta = pair
    finished_bot_match([alpha, beta], 1)
    finished_bot_match([beta, alpha], 1, forfeit=1, reason="timeout")
    page = text(client.get("/bots/alpha/"))
    assert 'href="/bots/alpha/vs/beta/"' in page
    assert 'href="/matches/?bot=alpha&amp;opponent=beta&amp;game=durak"' in page
    assert "1 timeout" in page


def test_archive_filtered_to_two_bots_lists_only_their_matches(client, pair, user_factory):
    alpha, beta = pair
    gamma = Bot.objects.create(
        name="gamma", owner=user_factory(), kind="builtin", builtin="random", games=["durak"]
    )
    together = finished_bot_match([alpha, beta], 1)
    apart = finished_bot_match([alpha, gamma], 1)
    page = text(client.get("/matches/?bot=alpha&opponent=beta"))
    assert f'href="/matches/{together.pk}/"' in page
    assert f'href="/matches/{apart.pk}/"' not in page
    api = client.get("/api/v1/matches/?bot=alpha&opponent=beta").json()
    assert [m["id"] for m in api["results"]] == [together.pk]


def test_versus_page_lists_their_matches_and_draws_the_running_score(client, pair):
    alpha, beta = pair
    matches = [finished_bot_match([alpha, beta], i % 2) for i in range(3)]
    response = client.get("/bots/alpha/vs/beta/")
    assert response.status_code == 200
    page = text(response)
    assert all(f'href="/matches/{m.pk}/"' in page for m in matches)
    assert 'aria-label="Running score of alpha against beta"' in page
    assert "3 games, 1.0 point to alpha" in page


def test_versus_page_queries_do_not_grow_with_the_matches(
    client, pair, django_assert_max_num_queries
):
    alpha, beta = pair
    finished_bot_match([alpha, beta], 1)
    with django_assert_max_num_queries(6) as few:
        client.get("/bots/alpha/vs/beta/")
    for _ in range(20):
        finished_bot_match([alpha, beta], 0)
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get("/bots/alpha/vs/beta/")


def test_versus_page_of_an_unknown_bot_is_404(client, pair):
    assert client.get("/bots/alpha/vs/nobody/").status_code == 404


def test_versus_page_of_one_version_counts_its_matches_only(client, pair):
    from bots import versions

    alpha, beta = pair
    versions.bot_version_first(bot=alpha)
    finished_bot_match([alpha, beta], 1)
    versions.bot_version_start(bot_id=alpha.pk, reason="owner", label="v2")
    finished_bot_match([alpha, beta], 0)
    page = text(client.get("/bots/alpha@v2/vs/beta/"))
    assert "1 game, 0.0 points to alpha@v2" in page
    assert client.get("/bots/alpha@v3/vs/beta/").status_code == 404
