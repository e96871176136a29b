"""The batch fit recovers simulated strengths, with honest intervals."""

import math
import random
import time

import pytest

from cardkit.stats.bradley_terry import fit_ratings
from cardkit.stats.elo import expected_score


def simulate(strengths, matches, *, players=2, seed=1):
    """Return (tables, losers) of random tables whose loser follows the pairwise model."""
    rng = random.Random(seed)
    names = list(strengths)
    tables, losers = [], []
    for _ in range(matches):
        table = rng.sample(names, players)
        # The loser is drawn in proportion to how likely each is to lose a pairwise game.
        weights = [
            sum(1 - expected_score(strengths[p], strengths[q]) for q in table if q != p)
            for p in table
        ]
        tables.append(table)
        losers.append(rng.choices(range(players), weights)[0])
    return tables, losers


def test_fit_orders_eight_bots_25_elo_apart():
    strengths = {f"bot{i}": 1500 + 25 * i for i in range(8)}
    tables, losers = simulate(strengths, 6000)

    fit = fit_ratings(tables, losers, anchor="bot0", anchor_rating=1500, bootstraps=100)

    assert [entry.player for entry in fit] == [f"bot{i}" for i in reversed(range(8))]
    by_name = {entry.player: entry for entry in fit}
    assert by_name["bot0"].rating == 1500
    for name, true in strengths.items():
        entry = by_name[name]
        assert entry.low <= true <= entry.high or abs(entry.rating - true) < 30
    assert all(entry.los > 0.5 for entry in fit[:-1])
    assert fit[-1].los is None


def test_fit_of_four_player_tables_recovers_the_order():
    strengths = {"a": 1300, "b": 1500, "c": 1700, "d": 1900, "e": 1600}
    tables, losers = simulate(strengths, 3000, players=4, seed=7)

    fit = fit_ratings(tables, losers, anchor="a", anchor_rating=1300, bootstraps=50)

    assert [entry.player for entry in fit] == ["d", "c", "e", "b", "a"]


def test_interval_narrows_with_more_games():
    strengths = {"a": 1500, "b": 1600}
    few = fit_ratings(*simulate(strengths, 40), anchor="a", bootstraps=200)
    many = fit_ratings(*simulate(strengths, 4000), anchor="a", bootstraps=200)

    def width(fit):
        return next(e.high - e.low for e in fit if e.player == "b")

    assert width(many) < width(few) / 3


def test_a_bot_that_never_lost_still_gets_a_finite_rating():
    fit = fit_ratings([["a", "b"]] * 5, [1] * 5, anchor="b", anchor_rating=1000, bootstraps=20)

    assert fit[0].player == "a"
    assert 1000 < fit[0].rating < 1600
    assert (fit[0].games, fit[0].losses, fit[1].losses) == (5, 0, 5)


def test_drawn_matches_between_equals_leave_them_equal():
    fit = fit_ratings([["a", "b"], ["a", "b"]], [None, None], anchor="a", bootstraps=10)

    assert [(e.rating, e.games, e.losses) for e in fit] == [(1500, 2, 0), (1500, 2, 0)]


def test_two_player_draw_scores_half_a_point_in_the_fit():
    """Two wins and eight draws is a score of 6 in 10, not 2 in 2: with the prior's two
    virtual draws (and its trace of 1e-3), 7 in 12."""
    tables = [["a", "b"]] * 10
    fit = fit_ratings(tables, [1, 1] + [None] * 8, anchor="b", anchor_rating=1000, bootstraps=0)

    score = (2 + 4 + 1 + 0.0005) / (10 + 2 + 0.001)
    assert fit[0].player == "a"
    assert fit[0].rating - 1000 == pytest.approx(400 * math.log10(score / (1 - score)), abs=0.01)


def test_without_the_anchor_the_mean_is_held():
    fit = fit_ratings(*simulate({"a": 1400, "b": 1600}, 200), anchor="zz", anchor_rating=1500)

    assert sum(e.rating for e in fit) / 2 == pytest.approx(1500)


def test_same_seed_gives_the_same_fit():
    data = simulate({"a": 1400, "b": 1500, "c": 1600}, 300)

    assert fit_ratings(*data, anchor="a", seed=3) == fit_ratings(*data, anchor="a", seed=3)


def test_hundred_thousand_matches_with_bootstrap_fit_in_a_few_seconds():
    strengths = {f"bot{i}": 1500 + 25 * i for i in range(8)}
    tables, losers = simulate(strengths, 100_000, seed=2)

    started = time.perf_counter()
    fit = fit_ratings(tables, losers, anchor="bot0", bootstraps=200)
    elapsed = time.perf_counter() - started

    assert [e.player for e in fit] == [f"bot{i}" for i in reversed(range(8))]
    assert elapsed < 5


def test_linked_rotations_keep_the_rating_and_count_the_luck_they_cancel_once():
    # 60 duplicate tables of a and b: the deck decides 50 (each bot wins it from seat 0),
    # a wins both rotations of 10. As independent deals that is 70-50; linked, the 50
    # split decks say nothing, and the 10 say a is better.
    tables, losers, groups = [], [], []
    for deck in range(60):
        tables += [["a", "b"], ["b", "a"]]
        losers += [1, 0] if deck < 10 else [1, 1]
        groups += [deck, deck]

    alone = fit_ratings(tables, losers, anchor="b", bootstraps=100)
    linked = fit_ratings(tables, losers, anchor="b", bootstraps=100, groups=groups)

    assert linked[0].rating == pytest.approx(alone[0].rating)
    assert linked[0].los > 0.99 > alone[0].los
    assert linked[0].high - linked[0].low < 0.6 * (alone[0].high - alone[0].low)


def test_groups_of_another_length_are_refused():
    with pytest.raises(ValueError, match="same length"):
        fit_ratings([["a", "b"]], [0], groups=[1, 2])
