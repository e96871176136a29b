"""Every read page and endpoint costs a pinned number of queries, however many rows.

A page that starts querying once per match, seat or bot is slow at a million matches
and quick on a test's few: only its count of queries shows it. ``PINNED`` is the count
of each route on the demo arena; the test asks every route, adds matches (rated ones,
so that the ledger, the head-to-head and the charts grow too), a tournament's and a
sequential test's, and asks again: both walks must cost exactly the pinned counts.
A change that adds a query on purpose changes its pin here, in the same commit.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bots import versions
from bots.models import Bot
from tournaments import creation as tournament_creation
from tournaments import sequential, sequential_pairs
from tournaments.models import SequentialPair, SequentialTest
from tournaments.ratings import ratings_apply_pending
from tournaments.services import inline_play, tournament_play_inline
from web.demo import bot_match_play

# route -> queries. Names in braces are filled by ``_paths``.
PINNED = {
    "/": 19,
    "/matches/": 4,
    "/matches/?bot={bot}": 5,
    "/matches/?bot={bot}&opponent={other}": 6,
    "/matches/{match}/": 3,
    "/api/v1/matches/": 2,
    "/api/v1/matches/?bot={bot}": 3,
    "/api/v1/matches/?bot={bot}&opponent={other}": 4,
    "/api/v1/matches/?page=1": 3,
    "/api/v1/matches/{match}/": 2,
    "/api/v1/matches/{match}/replay/": 4,
    "/bots/": 1,
    "/bots/{bot}/": 16,
    "/bots/{bot}/vs/{other}/": 4,
    "/api/v1/bots/": 2,
    "/api/v1/bots/{bot}/": 1,
    "/api/v1/bots/{bot}/opponents/": 2,
    "/api/v1/bots/{bot}/versions/": 2,
    "/leaderboard/durak-2p/": 7,
    "/api/v1/ratings/durak-2p/": 4,
    "/api/v1/ratings/bots/{bot}/": 3,
    "/tournaments/": 2,
    "/tournaments/{tournament}/": 7,
    "/api/v1/tournaments/": 4,
    "/api/v1/tournaments/{tournament}/": 3,
    "/api/v1/tournaments/{tournament}/standings/": 3,
    "/tests/{test}/": 1,
    "/api/v1/tests/": 2,
    "/api/v1/tests/{test}/": 1,
}


@pytest.fixture
def arena(demo, settings):
    # The rate-limit counters' queries belong to the limiter, not to the page.
    settings.API_THROTTLE_RATES = {}
    bots = demo.bots
    for bot in bots.values():
        versions.bot_version_first(bot=bot)
    with inline_play():
        test = sequential.sequential_test_create(
            user=bots["alice-greedy"].owner, candidate="alice-greedy", baseline="random",
            model="logistic", elo0=0.0, elo1=150.0, max_games=60,
        )  # fmt: skip
        _play_a_pair(test)
    return demo, test


def _play_a_pair(test) -> None:
    pending = test.pairs.filter(status=SequentialPair.Status.PENDING).first()
    with inline_play():
        sequential_pairs.sequential_pair_play(pair_id=pending.pk)


def _grow(demo, test) -> None:
    """Add rated matches between the bots the routes name, and a pair of the test."""
    bots = demo.bots
    for pair in (["greedy", "random"], ["random", "greedy"], ["greedy", "strong"]):
        bot_match_play("durak", [bots[name] for name in pair], rated=True)
    ratings_apply_pending()
    _play_a_pair(test)


def _paths(demo, test) -> dict[str, str]:
    names = {
        "bot": "greedy", "other": "random", "match": demo.rated[0].pk,
        "tournament": demo.tournament.pk, "test": test.pk,
    }  # fmt: skip
    return {route: route.format(**names) for route in PINNED}


def _counts(client, paths: dict[str, str]) -> dict[str, int]:
    counts = {}
    for route, path in paths.items():
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        counts[route] = sum(
            1 for q in captured.captured_queries
            if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
        )  # fmt: skip
    return counts


def test_read_routes_cost_their_pinned_queries_however_many_rows(client, arena):
    demo, test = arena
    paths = _paths(demo, test)

    before = _counts(client, paths)
    _grow(demo, test)
    after = _counts(client, paths)

    assert before == PINNED
    assert after == PINNED


def test_tournament_routes_cost_their_pinned_queries_with_sixty_matches(client, arena):
    demo, _ = arena
    owner = demo.bots["alice-greedy"].owner
    bots = [
        Bot.objects.create(name=f"entrant-{n}", owner=owner, kind=Bot.Kind.BUILTIN,
                           builtin="random", games=["durak"])
        for n in range(6)
    ]  # fmt: skip
    tournament = tournament_creation.tournament_create(
        creator=None, name="Sixty", game="durak", players=2, bots=bots, games_per_pairing=4,
        rated=False,
    )  # fmt: skip
    tournament_play_inline(tournament_id=tournament.pk)
    routes = {route: count for route, count in PINNED.items() if "{tournament}" in route}

    counts = _counts(client, {route: route.format(tournament=tournament.pk) for route in routes})

    assert tournament.matches.filter(status="finished").count() == 60
    assert counts == routes


def test_sequential_test_list_costs_its_pinned_queries_with_finished_tests(client, arena):
    demo, test = arena
    bots = demo.bots
    for baseline in ("greedy", "strong"):
        sequential.sequential_test_create(
            user=bots["alice-greedy"].owner, candidate="alice-greedy", baseline=baseline,
            model="logistic", elo0=0.0, elo1=150.0, max_games=60,
        )  # fmt: skip
    SequentialTest.objects.update(status=SequentialTest.Status.ACCEPTED)

    counts = _counts(client, {"/api/v1/tests/": "/api/v1/tests/"})

    assert counts == {"/api/v1/tests/": PINNED["/api/v1/tests/"] + 1}  # the pages' matches
