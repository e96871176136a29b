"""Elo applied exactly once, in finishing order; recompute; the batch fit; leaderboards."""

import threading

import pytest
from django.db import connection

from cardkit.stats.elo import elo_update
from games.models import Match
from tournaments.models import RatedMatch, Rating, RatingChange, RatingFit
from tournaments.ratings import (
    rated_matches_pending,
    ratings_apply_match,
    ratings_apply_pending,
    ratings_fit,
    ratings_recompute,
)
from tournaments.selectors import bot_rating_history, leaderboard

pytestmark = pytest.mark.django_db


def elo_of(bot, pool="durak-2p"):
    return Rating.objects.get(pool=pool, bot=bot).elo


def test_a_rated_match_moves_both_bots_by_half_k(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    match = finished_match([a, b], loser=1)

    entry = ratings_apply_match(match_id=match.pk)

    assert (entry.pool, entry.sequence, entry.loser_bot_id) == ("durak-2p", 1, b.pk)
    assert (elo_of(a), elo_of(b)) == (1508.0, 1492.0)
    changes = RatingChange.objects.order_by("seat").values_list("bot_id", "before", "after")
    assert list(changes) == [(a.pk, 1500.0, 1508.0), (b.pk, 1500.0, 1492.0)]
    rating = Rating.objects.get(bot=b)
    assert (rating.games, rating.losses, rating.draws) == (1, 1, 0)


def test_applying_a_match_again_changes_nothing(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    match = finished_match([a, b], loser=0)
    first = ratings_apply_match(match_id=match.pk)

    again = [ratings_apply_match(match_id=match.pk) for _ in range(3)]

    assert {entry.pk for entry in again} == {first.pk}
    assert RatingChange.objects.count() == 2
    assert (elo_of(a), elo_of(b)) == (1492.0, 1508.0)
    assert Rating.objects.get(bot=a).games == 1


def test_four_player_match_uses_k_over_three_per_pair(bot_factory, finished_match):
    bots = [bot_factory() for _ in range(4)]
    match = finished_match(bots, loser=2)

    ratings_apply_match(match_id=match.pk)

    assert [elo_of(bot, "durak-4p") for bot in bots] == pytest.approx(
        [1500 + 8 / 3, 1500 + 8 / 3, 1492.0, 1500 + 8 / 3]
    )


def test_drawn_match_counts_a_draw_and_moves_elo_by_half_a_point(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    ratings_apply_match(match_id=finished_match([a, b], loser=1).pk)
    before = Rating.objects.get(bot=a).elo

    ratings_apply_match(match_id=finished_match([a, b], loser=None).pk)

    rating = Rating.objects.get(bot=a)
    # a is above b now, so a draw takes some of a's gain back.
    assert rating.elo < before
    assert rating.elo == pytest.approx(elo_update([before, 3000 - before], None)[0])
    assert (rating.games, rating.draws, rating.losses) == (2, 1, 0)


def test_unrated_or_unfinished_matches_are_not_applied(bot_factory, finished_match):
    from games.models import Match

    a, b = bot_factory(), bot_factory()
    unrated = finished_match([a, b], loser=0, rated=False)
    active = finished_match([a, b], loser=None)
    Match.objects.filter(pk=active.pk).update(status=Match.Status.ACTIVE)

    assert ratings_apply_match(match_id=unrated.pk) is None
    assert ratings_apply_match(match_id=active.pk) is None
    assert not RatedMatch.objects.exists()


def test_matches_are_applied_in_the_order_they_finished(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    first = finished_match([a, b], loser=1)
    second = finished_match([a, b], loser=1)

    # The later match's task runs first: the earlier match is applied before it.
    ratings_apply_match(match_id=second.pk)

    assert list(RatedMatch.objects.order_by("sequence").values_list("match_id", flat=True)) == [
        first.pk,
        second.pk,
    ]
    # 1500 -> 1508, then 1508 + 16 * (1 - E(1508 vs 1492)).
    assert ratings_apply_match(match_id=first.pk).sequence == 1
    assert elo_of(a) == pytest.approx(1508 + 16 * (1 - 1 / (1 + 10 ** (-16 / 400))))


def test_pools_are_separate(bot_factory, finished_match):
    a, b, c = bot_factory(), bot_factory(), bot_factory()
    finished_match([a, b], loser=1)
    finished_match([a, b, c], loser=0)
    finished_match([a, b, c], loser=0, game="volynshchik")

    assert ratings_apply_pending() == 3

    pools = {r.pool for r in Rating.objects.filter(bot=a)}
    assert pools == {"durak-2p", "durak-3p", "volynshchik-3p"}
    assert elo_of(a) == 1508.0


def test_a_table_with_one_bot_twice_is_logged_but_not_rated(bot_factory, finished_match):
    a = bot_factory()
    match = finished_match([a, a], loser=0)

    assert ratings_apply_match(match_id=match.pk) is not None
    assert not Rating.objects.exists()


def test_recompute_from_the_archive_gives_the_stored_ratings(bot_factory, finished_match):
    bots = [bot_factory() for _ in range(4)]
    for number in range(30):
        table = [bots[(number + i) % 4] for i in range(2 + number % 3)]
        finished_match(table, loser=None if number % 7 == 0 else number % len(table))
    ratings_apply_pending()

    report = ratings_recompute()

    assert report.matches == 30
    assert report.mismatches == []


def test_recompute_finds_a_tampered_rating_and_fix_restores_it(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    ratings_apply_match(match_id=finished_match([a, b], loser=1).pk)
    Rating.objects.filter(bot=a).update(elo=1600)
    RatingChange.objects.filter(bot=b).update(after=1400)

    report = ratings_recompute(fix=True)

    assert len(report.mismatches) == 2
    assert (elo_of(a), RatingChange.objects.get(bot=b).after) == (1508.0, 1492.0)
    assert ratings_recompute().mismatches == []


def test_an_applied_match_is_marked_so_and_leaves_the_pending_matches(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    match = finished_match([a, b], loser=1)
    assert list(rated_matches_pending("durak-2p")) == [match]

    ratings_apply_match(match_id=match.pk)

    match.refresh_from_db()
    assert match.rating_applied
    assert not rated_matches_pending("durak-2p").exists()


def test_recompute_finds_an_applied_mark_that_disagrees_with_the_ledger(
    bot_factory, finished_match
):
    a, b = bot_factory(), bot_factory()
    applied = finished_match([a, b], loser=1)
    ratings_apply_match(match_id=applied.pk)
    pending = finished_match([a, b], loser=0)
    Match.objects.filter(pk=applied.pk).update(rating_applied=False)
    Match.objects.filter(pk=pending.pk).update(rating_applied=True)

    report = ratings_recompute(fix=True)

    assert len(report.mismatches) == 2
    assert ratings_recompute().mismatches == []
    assert list(rated_matches_pending("durak-2p")) == [pending]


@pytest.mark.postgres
def test_pending_matches_are_found_through_their_partial_index(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    ratings_apply_match(match_id=finished_match([a, b], loser=1).pk)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")

    plan = rated_matches_pending("durak-2p").order_by("finished_at", "pk").explain()

    assert "match_rating_pending" in plan


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_tasks_apply_a_match_once(bot_factory, finished_match):
    bots = [bot_factory() for _ in range(3)]
    matches = [finished_match(bots, loser=n % 3) for n in range(4)]
    barrier = threading.Barrier(8)
    errors = []

    def apply(match_id):
        try:
            barrier.wait()
            ratings_apply_match(match_id=match_id)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=apply, args=(m.pk,)) for m in matches * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert RatedMatch.objects.count() == 4
    assert RatingChange.objects.count() == 12
    assert list(RatedMatch.objects.order_by("sequence").values_list("match_id", flat=True)) == [
        m.pk for m in matches
    ]
    assert ratings_recompute().mismatches == []


def test_fit_anchors_the_random_bot_and_orders_the_pool(bot_factory, finished_match, settings):
    settings.RATING_ANCHOR_BOT = "anchor"
    anchor = bot_factory(name="anchor")
    strong, middle = bot_factory("greedy"), bot_factory("greedy")
    for _ in range(20):
        finished_match([strong, anchor], loser=1)
        finished_match([middle, anchor], loser=1)
        finished_match([strong, middle], loser=1)
    finished_match([strong, anchor], loser=0)
    finished_match([middle, anchor], loser=0)
    finished_match([strong, middle], loser=0)
    finished_match([middle, anchor], loser=0)
    ratings_apply_pending()

    fit = ratings_fit(pool="durak-2p", bootstraps=50)

    entries = list(fit.entries.order_by("rank"))
    assert [e.bot_id for e in entries] == [strong.pk, middle.pk, anchor.pk]
    assert entries[-1].rating == settings.RATING_ANCHOR
    assert all(e.low <= e.rating <= e.high for e in entries)
    assert entries[0].los > 0.5 and entries[-1].los is None
    assert (fit.matches, fit.through_sequence) == (64, 64)
    # Nothing new: no second fit.
    assert ratings_fit(pool="durak-2p") is None
    assert RatingFit.objects.count() == 1


def test_leaderboard_lists_fit_then_unfitted_bots_with_elo(bot_factory, finished_match):
    a, b, c = bot_factory(), bot_factory(), bot_factory()
    for _ in range(3):
        finished_match([a, b], loser=1)
    ratings_apply_pending()
    ratings_fit(pool="durak-2p", bootstraps=20)
    ratings_apply_match(match_id=finished_match([c, a], loser=0).pk)

    fit, lines = leaderboard("durak-2p")

    assert [line.bot_id for line in lines] == [a.pk, b.pk, c.pk]
    assert lines[0].rank == 1 and lines[0].games == 4 and lines[0].elo == elo_of(a)
    assert lines[1].losses == 3 and lines[1].loss_rate == 1.0
    assert lines[2].rank is None and lines[2].provisional
    # Three games are not enough to be sure of anything.
    assert lines[0].provisional


def test_rating_history_lists_elo_changes_and_fits(bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    ratings_apply_match(match_id=finished_match([a, b], loser=1).pk)
    ratings_apply_match(match_id=finished_match([a, b], loser=1).pk)
    ratings_fit(pool="durak-2p", bootstraps=10)

    history = bot_rating_history(a.pk)

    assert [change["after"] for change in history["elo"]] == [1508.0, elo_of(a)]
    assert [fit["rank"] for fit in history["fits"]] == [1]
