"""The bot page, the versus page, the opponents endpoint and the leaderboard read a bounded
amount whatever the length of the history: their queries do not grow with it, the charts
draw the newest points only, and the trend lines are the newest changes."""

from __future__ import annotations

import itertools

import pytest

from bots import versions
from bots.models import Bot
from tests.matches import finished_bot_match
from tournaments.models import RatingChange
from tournaments.ratings import ratings_apply_match, ratings_fit
from web import bot_views
from web.selectors import pool_trends

pytestmark = pytest.mark.django_db

ROUTES = ["/bots/alpha/", "/bots/alpha/vs/beta/", "/api/v1/bots/alpha/opponents/",
          "/leaderboard/durak-2p/"]  # fmt: skip


@pytest.fixture
def trio(user_factory):
    owner = user_factory()
    bots = [
        Bot.objects.create(
            name=name, owner=owner, kind=Bot.Kind.BUILTIN, builtin="random", games=["durak"]
        )
        for name in ("alpha", "beta", "gamma")
    ]
    for bot in bots:
        versions.bot_version_first(bot=bot)
    return bots


def play(bots: list[Bot], matches: int, start: int = 0) -> None:
    """Finish ``matches`` rated matches among ``bots`` and apply their ratings; every
    fifth a forfeit, every seventh a three-player table, a new version of alpha midway."""
    pairs = itertools.cycle(itertools.permutations(bots, 2))
    for number in range(start, start + matches):
        if number == start + matches // 2:
            versions.bot_version_start(bot_id=bots[0].pk, reason="owner")
        table = list(next(pairs)) if number % 7 else list(bots)
        forfeit = 0 if number % 5 == 0 else None
        match = finished_bot_match(
            table, number % len(table), forfeit=forfeit,
            reason="timeout" if forfeit is not None else "loser", rated=True,
        )  # fmt: skip
        ratings_apply_match(match_id=match.pk)
    ratings_fit(pool="durak-2p", bootstraps=0, force=True)


def queries(client, django_assert_max_num_queries, path: str) -> int:
    with django_assert_max_num_queries(60) as captured:
        assert client.get(path).status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize("path", ROUTES)
def test_reads_make_as_many_queries_after_a_long_history_as_after_a_short_one(
    client, trio, django_assert_max_num_queries, path
):
    play(trio, 8)
    few = queries(client, django_assert_max_num_queries, path)
    play(trio, 40, start=8)
    assert queries(client, django_assert_max_num_queries, path) <= few


def test_bot_page_draws_the_newest_changes_only_and_stays_small(
    client, trio, monkeypatch
):
    monkeypatch.setattr(bot_views, "CHART_POINTS", 10)
    play(trio, 40)
    short = client.get("/bots/alpha/").content.decode()
    play(trio, 80, start=40)
    long = client.get("/bots/alpha/").content.decode()
    elo_chart = chart(long, "Elo history")
    # In each pool, the newest ten changes and the rating before them: eleven points.
    assert elo_chart.count('class="line"') == 2
    for pool in ("durak-2p", "durak-3p"):
        assert elo_chart.count(f"<title>{pool} after match") == 11
    played = RatingChange.objects.filter(bot=trio[0], pool="durak-2p").count()
    assert f"durak-2p after match {played}:" in elo_chart
    # Drawn in full, the 2 x 120 changes would take some 25 kB.
    assert len(chart(short, "Elo history")) <= len(elo_chart) < 5_000
    # The rest of the page is capped lists (matches, forfeits, opponents, versions).
    assert len(long) < 40_000


def chart(page: str, title: str) -> str:
    drawn = page[page.index(f'aria-label="{title}"') :]
    return drawn[: drawn.index("</svg>")]


def test_trend_lines_are_each_bots_newest_changes(trio, django_assert_num_queries):
    play(trio, 30)
    ids = [bot.pk for bot in trio]
    with django_assert_num_queries(2):
        trends = pool_trends("durak-2p", ids, points=5)
    for bot in trio:
        changes = list(
            RatingChange.objects.filter(bot=bot, pool="durak-2p").order_by("sequence")
        )[-5:]
        assert trends[bot.pk] == [changes[0].before] + [change.after for change in changes]


def test_trend_line_of_a_bot_with_few_changes_is_all_of_them(trio):
    play(trio[:2], 3)
    trends = pool_trends("durak-2p", [bot.pk for bot in trio], points=20)
    assert len(trends[trio[0].pk]) == 4 and trio[2].pk not in trends


def test_versus_page_counts_every_game_and_lists_the_newest(client, trio, monkeypatch):
    monkeypatch.setattr(bot_views, "VERSUS_LINES", 5)
    alpha, beta, _ = trio
    matches = [finished_bot_match([alpha, beta], int(i % 3 == 0)) for i in range(12)]
    page = client.get("/bots/alpha/vs/beta/").content.decode()
    # beta (seat 1) lost matches 0, 3, 6 and 9: 4 points of 12 to alpha.
    assert "12 games, 4.0 points to alpha" in page
    assert "the newest 5; 7 older in the archive" in page
    listed = [m.pk for m in matches if f'href="/matches/{m.pk}/"' in page]
    assert listed == [m.pk for m in matches[-5:]]
    chart = page[page.index('aria-label="Running score of alpha against beta"') :]
    # The line starts where the 7 older games left it (3 points: 2 * 3 - 7 = -1) and draws
    # the 5 listed.
    assert chart.count("<circle") == 6 and "alpha - beta after match 7: -1" in chart
