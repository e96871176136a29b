"""Multi-player Elo on hand-worked examples."""

import pytest

from cardkit.stats.elo import elo_update, expected_score


def test_two_equal_players_move_half_of_k():
    # Expected score 0.5 each; the winner scores 1: 1500 + 16 * (1 - 0.5) = 1508.
    assert elo_update([1500, 1500], loser=1) == [1508.0, 1492.0]


def test_favourite_losing_two_player_match():
    # E(1600 vs 1400) = 1 / (1 + 10 ** (-200 / 400)) = 0.7597469...
    # The favourite scores 0: 1600 + 16 * (0 - 0.7597469) = 1587.8440...
    after = elo_update([1600, 1400], loser=0)

    assert after == pytest.approx([1587.844050, 1412.155950], abs=1e-6)


def test_underdog_losing_moves_little():
    # 1400 + 16 * (0 - 0.2402531) = 1396.1559...
    assert elo_update([1600, 1400], loser=1) == pytest.approx([1603.844050, 1396.155950], abs=1e-6)


def test_four_equal_players_loser_pays_k_and_others_share_it():
    # K per pair = 16 / 3. The loser scores 0 against three opponents expecting 0.5 each:
    # 16/3 * (-1.5) = -8. Each other player beats the loser (+0.5) and draws two
    # (0 each): 16/3 * 0.5 = +8/3.
    after = elo_update([1500, 1500, 1500, 1500], loser=2)

    assert after == pytest.approx([1500 + 8 / 3, 1500 + 8 / 3, 1492.0, 1500 + 8 / 3])


def test_four_unequal_players_by_hand():
    ratings = [1700, 1500, 1500, 1300]
    e = expected_score
    k = 16 / 3
    # Seat 1 loses. Seat 0: beats 1 (1 - e(1700,1500)), draws 2 (0.5 - e(1700,1500)),
    # draws 3 (0.5 - e(1700,1300)).
    seat0 = 1700 + k * ((1 - e(1700, 1500)) + (0.5 - e(1700, 1500)) + (0.5 - e(1700, 1300)))
    # e(1700,1500) = 0.7597469, e(1700,1300) = 0.9090909:
    # 0.2402531 - 0.2597469 - 0.4090909 = -0.4285847; 1700 + 16/3 * (-0.4285847).
    assert seat0 == pytest.approx(1697.714215, abs=1e-6)

    after = elo_update(ratings, loser=1)

    assert after[0] == pytest.approx(seat0)
    # Seat 1 loses to all: 16/3 * ((0 - .2402531) + (0 - .5) + (0 - .7597469)) = -8.
    assert after[1] == pytest.approx(1492.0)
    # Seat 3: beats 1 (1 - .2402531), draws 0 (0.5 - .0909091), draws 2 (0.5 - .2402531).
    assert after[3] == pytest.approx(1300 + k * (0.7597469 + 0.4090909 + 0.2597469), abs=1e-5)
    assert sum(after) == pytest.approx(sum(ratings))


def test_two_player_draw_scores_half_a_point_each():
    k = 16.0
    expected = 1.0 / (1.0 + 10.0 ** (200 / 400))  # 1400 against 1600: 0.2402531

    after = elo_update([1400, 1600], loser=None, k=k)

    assert after == pytest.approx([1400 + k * (0.5 - expected), 1600 - k * (0.5 - expected)])


def test_drawn_match_of_three_is_three_draws():
    after = elo_update([1620, 1480, 1390], loser=None)

    assert after[0] < 1620 and after[2] > 1390
    assert sum(after) == pytest.approx(1620 + 1480 + 1390)


def test_draw_between_equals_changes_nothing():
    assert elo_update([1500, 1500], loser=None) == [1500, 1500]


def test_k_is_a_parameter():
    assert elo_update([1500, 1500], loser=0, k=32) == [1484.0, 1516.0]
