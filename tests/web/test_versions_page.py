"""The versions of a bot on its page: games, loss rate, fitted rating, chart marks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bots import versions
from bots.models import Bot
from tests.matches import finished_bot_match
from tournaments.models import FitEntry, RatingFit
from web.charts import rating_charts

pytestmark = pytest.mark.django_db


def test_bot_page_lists_each_versions_games_loss_rate_and_rating(client, user_factory):
    owner = user_factory()
    alpha, beta = (
        Bot.objects.create(name=n, owner=owner, kind="builtin", builtin="random",
                           games=["durak"])  # fmt: skip
        for n in ("alpha", "beta")
    )
    versions.bot_version_first(bot=alpha)
    for loser in (0, 0, 1, 0):
        finished_bot_match([alpha, beta], loser, rated=True)
    versions.bot_version_start(bot_id=alpha.pk, reason="owner", label="v2")
    fit = RatingFit.objects.create(
        pool="durak-2p", matches=4, through_sequence=4, bootstraps=0, anchor_rating=1000
    )
    FitEntry.objects.create(fit=fit, bot=beta, rank=1, rating=1000, low=900, high=1100,
                            games=4, losses=1, provisional=True)  # fmt: skip
    page = client.get("/bots/alpha/").content.decode()
    assert "alpha@1" in page and "alpha@v2" in page and "current" in page
    assert "75%" in page  # version 1 lost 3 of 4
    assert "Durak, 2 players: <b>" in page


def test_the_elo_chart_marks_where_a_version_started():
    start = timezone.now()
    history = {
        "elo": [
            {"pool": "durak-2p", "match_id": n, "before": 1500 + n, "after": 1501 + n,
             "lost": False, "created_at": start + timedelta(minutes=n)}
            for n in range(6)
        ],
        "fits": [],
    }  # fmt: skip
    marked = rating_charts(history, [(start, "1"), (start + timedelta(minutes=2.5), "v2")])
    assert marked["elo"].count('class="mark"') == 1 and ">v2</text>" in marked["elo"]
    assert 'class="mark"' not in rating_charts(history, [(start, "1")])["elo"]


def test_a_version_named_as_bot_at_label_leads_to_its_line_on_the_bot_page(client, user_factory):
    bot = Bot.objects.create(
        name="alpha", owner=user_factory(), kind="builtin", builtin="random", games=["durak"]
    )
    versions.bot_version_first(bot=bot)
    answer = client.get("/bots/alpha@1/")
    assert answer.status_code == 302 and answer["Location"] == "/bots/alpha/#versions"
    assert client.get("/bots/alpha@9/").status_code == 404
