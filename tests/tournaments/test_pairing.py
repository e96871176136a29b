"""The ladder's table choice (tournaments.pairing): pure, seeded, owner rule kept."""

import random
from collections import Counter

import pytest

from tournaments.pairing import (
    Candidate,
    closest_table,
    informative_table,
    overlap,
    seat_rotations,
)


def bot(key, rating, games, *, owner=None, builtin=False, width=100.0, fitted=True):
    return Candidate(
        key=key,
        owner=key if owner is None else owner,
        builtin=builtin,
        rating=rating,
        games=games,
        low=rating - width / 2 if fitted else None,
        high=rating + width / 2 if fitted else None,
    )


def arena(size=12):
    return [bot(k, 1000 + 40 * k, 50 + k) for k in range(size)]


def test_closest_table_starts_from_the_fewest_games_and_adds_the_closest_rating():
    a, b, c, d = bot("a", 1500, 10), bot("b", 1400, 2), bot("c", 1420, 5), bot("d", 1700, 0)

    assert [x.key for x in closest_table([a, b, c, d], 2)] == ["d", "a"]


def test_informative_tables_never_seat_two_bots_of_one_owner():
    bots = [bot(k, 1000 + 10 * k, 20, owner=k // 2) for k in range(10)]
    rng = random.Random(7)

    for _ in range(300):
        table = informative_table(bots, 3, rng)
        owners = [b.owner for b in table]
        assert len(set(owners)) == 3


def test_built_in_bots_of_one_owner_may_share_an_informative_table():
    bots = [bot(k, 1500, 0, owner="arena", builtin=True) for k in range(2)]

    assert len(informative_table(bots, 2, random.Random(1))) == 2


def test_no_table_when_the_owner_rule_leaves_too_few_bots():
    bots = [bot(k, 1500, 0, owner="alice") for k in range(3)]

    assert informative_table(bots, 2, random.Random(1)) is None
    assert closest_table(bots, 2) is None


def test_a_seeded_choice_chooses_the_same_tables():
    bots = arena()

    def tables(seed):
        rng = random.Random(seed)
        return [[b.key for b in informative_table(bots, 3, rng)] for _ in range(50)]

    assert tables(3) == tables(3)
    assert tables(3) != tables(4)


def test_a_bot_never_fitted_is_seated_first():
    bots = [*arena(), bot("new", 1500, 0, fitted=False)]

    for seed in range(20):
        assert "new" in [b.key for b in informative_table(bots, 2, random.Random(seed))]


def test_a_separated_bot_still_plays_through_the_exploration_floor():
    # Bot 0 is far below the rest: its pair is certain, so only exploration seats it.
    bots = [bot(0, 0, 500, width=20), *(bot(k, 2000 + 5 * k, 10 + k) for k in range(1, 8))]
    rng = random.Random(11)

    seated = Counter(b.key for _ in range(2000) for b in informative_table(bots, 2, rng))

    # At least its share of the uniform seeds: 2000 * 0.1 / 8 = 25.
    assert seated[0] >= 20


def test_informative_tables_favour_the_pairs_that_overlap():
    # 0-1 is separated, 1-2 and 2-3 overlap.
    bots = [bot(0, 1000, 100, width=40), bot(1, 1300, 100, width=40),
            bot(2, 1310, 100, width=200), bot(3, 1320, 100, width=200)]  # fmt: skip
    rng = random.Random(5)

    pairs = Counter(
        frozenset(b.key for b in informative_table(bots, 2, rng, explore=0.0)) for _ in range(500)
    )

    assert pairs[frozenset({0, 1})] == 0
    assert pairs[frozenset({2, 3})] + pairs[frozenset({1, 2})] == 500


def test_overlap_is_a_half_for_equal_ratings_and_falls_with_the_gap():
    a, b, c = bot("a", 1500, 0), bot("b", 1500, 0), bot("c", 1700, 0)

    assert overlap(a, b) == 0.5
    assert overlap(a, c) < 0.01


def test_a_duplicate_table_seats_every_bot_in_every_seat_once():
    rotations = seat_rotations(["a", "b", "c"])

    assert rotations == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    for seat in range(3):
        assert sorted(r[seat] for r in rotations) == ["a", "b", "c"]


def test_the_chance_of_a_wrong_order_between_fitted_neighbours_is_the_fits_own():
    # Both intervals are wide (far from the anchor), but the fit measured their difference.
    upper = Candidate(key="u", owner="u", builtin=False, rating=1600, games=500,
                      low=1400, high=1800, los=0.999, below="l")  # fmt: skip
    lower = bot("l", 1580, 500, width=400)
    elsewhere = bot("x", 1580, 500, width=400)

    assert overlap(upper, lower) == overlap(lower, upper) == pytest.approx(0.001)
    # Not neighbours in the fit: from the two intervals.
    assert overlap(upper, elsewhere) > 0.4


def test_informative_tables_follow_the_fits_likelihood_not_the_intervals():
    # By the intervals 2-3 overlap most; by the fit only 0-1 is uncertain.
    def fitted(key, rating, width, los):
        return Candidate(key=key, owner=key, builtin=False, rating=rating, games=100,
                         low=rating - width / 2, high=rating + width / 2, los=los,
                         below=key + 1 if key < 3 else None)  # fmt: skip

    bots = [fitted(0, 1400, 60, 0.6), fitted(1, 1380, 60, 0.9999),
            fitted(2, 1200, 400, 0.9999), fitted(3, 1190, 400, None)]  # fmt: skip
    rng = random.Random(5)

    pairs = Counter(
        frozenset(b.key for b in informative_table(bots, 2, rng, explore=0.0)) for _ in range(500)
    )

    assert pairs[frozenset({0, 1})] > 400


def test_informative_tables_seed_the_least_separated_pair_when_every_pair_is_far_apart():
    """Past 38 standard deviations the tails underflowed to 0, every weight was 0 and the
    seed was drawn uniformly; in log space the closest pair still weighs most."""
    bots = [bot(0, 0, 100, width=4), bot(1, 1000, 100, width=4), bot(2, 1080, 100, width=4)]
    rng = random.Random(3)

    pairs = Counter(
        frozenset(b.key for b in informative_table(bots, 2, rng, explore=0.0)) for _ in range(300)
    )

    assert pairs == {frozenset({1, 2}): 300}


def test_a_fits_los_of_one_falls_back_to_the_intervals_tail():
    upper = Candidate(key="u", owner="u", builtin=False, rating=1600, games=500,
                      low=1590, high=1610, los=1.0, below="l")  # fmt: skip
    lower = bot("l", 1400, 500, width=20)

    assert 0.0 < overlap(upper, lower) < 1e-100
