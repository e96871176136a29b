"""The Elo scale and the normal tails (cardkit.stats.scales): one definition, no underflow."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from cardkit.stats import scales


@pytest.mark.parametrize("x", [-3.0, 0.0, 1.5, 8.0, 12.0, 30.0, 37.0])
def test_normal_tails_match_scipys_and_keep_their_digits_far_out(x):
    assert scales.normal_sf(x) == pytest.approx(stats.norm.sf(x), rel=1e-12)
    assert scales.normal_cdf(-x) == pytest.approx(stats.norm.cdf(-x), rel=1e-12)


@pytest.mark.parametrize("x", [-2.0, 0.0, 5.0, 29.9, 30.0, 40.0, 100.0, 1000.0])
def test_log_normal_tail_is_finite_and_matches_scipys_logsf(x):
    assert math.isfinite(scales.log_normal_sf(x))
    assert scales.log_normal_sf(x) == pytest.approx(stats.norm.logsf(x), rel=1e-9)


def test_the_tail_that_normaldist_loses_is_kept():
    assert 1.0 - NormalDist().cdf(9.0) == 0.0
    assert scales.normal_sf(9.0) == pytest.approx(1.1285884059538e-19, rel=1e-9)


def test_elo_of_score_inverts_logistic_score_and_is_clipped_once():
    elo = np.array([-800.0, -100.0, 0.0, 35.0, 700.0])
    assert scales.elo_of_score(scales.logistic_score(elo)) == pytest.approx(elo)
    limit = -400.0 * math.log10(1.0 / (1.0 - scales.SCORE_CLIP) - 1.0)
    assert scales.elo_of_score([0.0, 1.0]) == pytest.approx([-limit, limit])


def test_newton_steps_are_capped_at_one_elo_step_in_any_unit():
    assert scales.clip_step(1000.0) == scales.MAX_ELO_STEP
    natural = scales.clip_step(-50.0, unit=scales.ELO_PER_NATURAL_UNIT)
    assert natural * scales.ELO_PER_NATURAL_UNIT == pytest.approx(-scales.MAX_ELO_STEP)
