"""Migration 0007: the one Volynshchik pool becomes one pool per table size, honestly."""

import importlib

import pytest
from django.apps import apps

from tournaments.models import (
    LadderMatch,
    RatedMatch,
    Rating,
    RatingChange,
    RatingFit,
    RatingPool,
)
from tournaments.ratings import ratings_apply_pending, ratings_recompute

pytestmark = pytest.mark.django_db

migration = importlib.import_module("tournaments.migrations.0007_volynshchik_pool_per_table_size")


def snapshot():
    return (
        sorted(RatedMatch.objects.values_list("match_id", "pool", "sequence")),
        sorted(RatingChange.objects.values_list("match_id", "bot_id", "pool", "sequence",
                                                "before", "after")),  # fmt: skip
        sorted(Rating.objects.values_list("pool", "bot_id", "elo", "games", "losses", "draws")),
        sorted(RatingPool.objects.values_list("key", "matches_applied")),
        sorted(LadderMatch.objects.values_list("match_id", "pool")),
    )


def test_the_volynshchik_pool_splits_by_table_size_with_its_elo_replayed(
    bot_factory, finished_match
):
    a, b, c = bot_factory(), bot_factory(), bot_factory()
    three = finished_match([a, b, c], loser=0, game="volynshchik")
    finished_match([a, b], loser=1, game="volynshchik")
    finished_match([c, a, b], loser=2, game="volynshchik")
    finished_match([b, a], loser=0, game="volynshchik")
    finished_match([a, b], loser=0)  # Durak: untouched
    LadderMatch.objects.create(match=three, pool="volynshchik-3p")
    ratings_apply_pending()
    split = snapshot()

    # The state before the migration: one pool, its Elo replayed over all table sizes.
    migration.backward(apps, None)
    merged = snapshot()
    assert [row for row in merged[3] if row[0].startswith("volynshchik")] == [("volynshchik", 4)]
    assert [s for m, p, s in merged[0] if p == "volynshchik"] == [1, 2, 3, 4]
    assert {p for _, p in merged[4]} == {"volynshchik"}
    assert merged[2] != split[2]  # the mixed pool's Elo differs

    migration.forward(apps, None)

    after = snapshot()
    assert after[:3] == split[:3] and after[4] == split[4]
    assert [row for row in after[3] if row[0].startswith("volynshchik")] == [
        ("volynshchik-2p", 2), ("volynshchik-3p", 2), ("volynshchik-4p", 0), ("volynshchik-5p", 0)
    ]  # fmt: skip
    assert not ratings_recompute().mismatches
    fits = {fit.pool: fit for fit in RatingFit.objects.all()}
    assert set(fits) == {"volynshchik-2p", "volynshchik-3p"}
    assert (fits["volynshchik-3p"].matches, fits["volynshchik-2p"].matches) == (2, 2)
    assert fits["volynshchik-3p"].entries.count() == 3
