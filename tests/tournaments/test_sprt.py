"""The GSPRT on pentanomial pair counts (cardkit.stats.sprt), checked by simulation.

The simulations are seeded, so each test gives the same figures every run; the
tolerances are three binomial standard errors, loose enough for any seed and tight
enough that an LLR off by a factor of two, or with its sign or bounds swapped, fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import sprt as benchmark
from cardkit.stats import sprt

RUNS = 600
ALPHA = BETA = 0.05


def _band(p: float, runs: int) -> float:
    return 3 * math.sqrt(p * (1 - p) / runs)


@pytest.mark.parametrize("model", sprt.MODELS)
@pytest.mark.parametrize(
    ("true", "accepts_h1", "seed"), [(0, ALPHA, 11), (40, 1 - BETA, 12)], ids=["elo0", "elo1"]
)
def test_the_test_accepts_h1_at_its_error_rates(model, true, accepts_h1, seed):
    """At elo0 about alpha of the runs accept H1 (1 - alpha accept H0); at elo1 about
    1 - beta."""
    pdf = sprt.pairs_with_elo(true, model=model)
    result = sprt.simulate(
        pdf, 0, 40, ALPHA, BETA, runs=RUNS, max_pairs=20_000, model=model, seed=seed
    )
    assert result.undecided == 0
    assert abs(result.accepted_h1 / RUNS - accepts_h1) <= _band(accepts_h1, RUNS)


def test_the_sequential_test_needs_fewer_pairs_on_average_than_a_fixed_size_test():
    pdf = sprt.pairs_with_elo(40)
    result = sprt.simulate(pdf, 0, 40, ALPHA, BETA, runs=RUNS, max_pairs=20_000, seed=13)
    assert result.mean_pairs < sprt.fixed_pairs(pdf, 0, 40, ALPHA, BETA)


def test_bounds_are_walds_from_alpha_and_beta():
    low, high = sprt.llr_bounds(0.05, 0.05)
    assert low == pytest.approx(-2.944, abs=1e-3)
    assert high == pytest.approx(2.944, abs=1e-3)
    assert sprt.llr_bounds(0.1, 0.2) == pytest.approx((math.log(0.2 / 0.9), math.log(0.8 / 0.1)))


@pytest.mark.parametrize("model", sprt.MODELS)
def test_llr_is_zero_without_pairs_and_antisymmetric_in_the_hypotheses(model):
    counts = [3, 10, 30, 12, 5]
    assert sprt.llr([0, 0, 0, 0, 0], 0, 20, model=model) == 0
    assert sprt.llr(counts, 0, 20, model=model) == pytest.approx(
        -sprt.llr(counts, 20, 0, model=model)
    )


@pytest.mark.parametrize("model", sprt.MODELS)
def test_llr_favours_the_candidate_when_it_wins_more_pairs(model):
    assert sprt.llr([5, 10, 30, 25, 10], 0, 10, model=model) > 0
    assert sprt.llr([10, 25, 30, 10, 5], 0, 10, model=model) < 0


def test_llr_scores_many_tests_at_once_as_one_by_one():
    counts = np.array([[3, 10, 30, 12, 5], [0, 1, 2, 3, 0], [9, 9, 9, 9, 9]])
    for model in sprt.MODELS:
        together = sprt.llr(counts, 0, 15, model=model)
        assert together == pytest.approx([sprt.llr(row, 0, 15, model=model) for row in counts])


def test_maximum_likelihood_fit_has_the_asked_mean_and_the_lagrange_form():
    _, pdf = sprt._pdf(np.array([4.0, 11, 25, 9, 1]))
    fitted = sprt.mle_with_mean(pdf, 0.56)
    assert fitted.sum() == pytest.approx(1)
    assert (fitted * sprt.PAIR_SCORES).sum() == pytest.approx(0.56)
    # At the constrained maximum pdf / fitted is affine in the score.
    ratio = pdf / fitted
    slope = np.polyfit(sprt.PAIR_SCORES, ratio, 1)
    assert np.polyval(slope, sprt.PAIR_SCORES) == pytest.approx(ratio)


def test_estimate_gives_elo_with_its_interval_and_los():
    even = sprt.estimate([10, 20, 40, 20, 10])
    assert even.elo == pytest.approx(0, abs=1e-9)
    assert even.los == pytest.approx(0.5)
    assert even.elo_low < 0 < even.elo_high
    better = sprt.estimate([2, 10, 40, 30, 18])
    assert better.score == pytest.approx((10 * 0.25 + 40 * 0.5 + 30 * 0.75 + 18) / 100)
    assert better.elo == pytest.approx(-400 * math.log10(1 / better.score - 1))
    assert better.elo_low < better.elo < better.elo_high
    assert better.los > 0.99 and better.nelo > 0


def test_decision_reads_the_llr_against_the_bounds():
    assert sprt.decision(-3.0, 0.05, 0.05) == "H0"
    assert sprt.decision(3.0, 0.05, 0.05) == "H1"
    assert sprt.decision(0.5, 0.05, 0.05) == ""


def test_an_unknown_model_is_refused():
    with pytest.raises(ValueError, match="unknown Elo model"):
        sprt.llr([1, 1, 1, 1, 1], 0, 10, model="glicko")


# ---- the exact normalised LLR, against an independent computation ---------------------

# Ordinary and lopsided counts (every pair won, every pair lost, every pair split 1-1,
# a few pairs only, the two extremes together): the table of docs/sequential-tests.md.
LOPSIDED = benchmark.LOPSIDED


def _scipy_t_value_fit(pdf: np.ndarray, t: float) -> np.ndarray:
    """Maximise the pentanomial likelihood under ``(mu - 1/2) / sigma = t`` with scipy's
    SLSQP (equality constraints), from several starts, keeping the best feasible one."""
    from scipy.optimize import minimize

    scores = sprt.PAIR_SCORES

    def t_gap(p):
        mu = p @ scores
        return mu - 0.5 - t * math.sqrt(max(p @ (scores - mu) ** 2, 0.0))

    starts = [np.full(5, 0.2), pdf, *np.random.default_rng(0).dirichlet(np.ones(5), size=4)]
    best = None
    for start in starts:
        result = minimize(
            lambda p: -(pdf @ np.log(p)), start, jac=lambda p: -pdf / p, method="SLSQP",
            bounds=[(1e-12, 1.0)] * 5, options={"ftol": 1e-15, "maxiter": 2000},
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0},
                         {"type": "eq", "fun": t_gap}],
        )  # fmt: skip
        feasible = abs(t_gap(result.x)) < 1e-9 and abs(result.x.sum() - 1) < 1e-9
        if result.success and feasible and (best is None or result.fun < best.fun):
            best = result
    assert best is not None, "SLSQP found no feasible fit"
    return best.x


def _scipy_llr(counts, elo0: float, elo1: float) -> float:
    # Fishtest's regularisation: an empty count becomes 1e-3.
    counts = np.where(np.asarray(counts, dtype=float) == 0, 1e-3, counts)
    total = counts.sum()
    pdf = counts / total
    p0, p1 = (_scipy_t_value_fit(pdf, math.sqrt(2) * e / sprt.NELO_PER_T) for e in (elo0, elo1))
    return float(total * (pdf @ np.log(p1 / p0)))


@pytest.mark.parametrize("counts", LOPSIDED, ids=lambda c: "-".join(map(str, c)))
def test_normalized_llr_is_the_constrained_maximum_likelihood_ratio_scipy_finds(counts):
    assert sprt.llr(counts, 0, 20) == pytest.approx(_scipy_llr(counts, 0, 20), abs=1e-6)


def test_normalized_llr_of_rows_at_once_matches_scipy_with_a_negative_elo0():
    together = sprt.llr(np.array(LOPSIDED[:4]), -10, 10)
    assert together == pytest.approx([_scipy_llr(c, -10, 10) for c in LOPSIDED[:4]], abs=1e-6)


def test_normalized_llr_accepts_a_candidate_that_wins_every_pair():
    """The closed-form approximation gave 0.14 here, under any bound: the test ran on."""
    assert sprt.decision(sprt.llr([0, 0, 0, 0, 100], 0, 20), ALPHA, BETA) == "H1"
    assert sprt.decision(sprt.llr([100, 0, 0, 0, 0], 0, 20), ALPHA, BETA) == "H0"


def test_normalized_llr_is_near_the_closed_form_on_ordinary_counts():
    counts = [30, 100, 300, 120, 50]
    assert sprt.llr(counts, 0, 20) == pytest.approx(
        sprt.llr_normalized_approximation(counts, 0, 20), abs=0.01
    )


@pytest.mark.parametrize("counts", LOPSIDED, ids=lambda c: "-".join(map(str, c)))
def test_t_value_fit_has_the_asked_t_value(counts):
    _, pdf = sprt._pdf(np.array(counts, dtype=float))
    fitted = sprt.mle_with_t_value(pdf, 0.1)
    mu, var = sprt._moments(fitted)
    assert fitted.sum() == pytest.approx(1)
    assert (mu - 0.5) / math.sqrt(var) == pytest.approx(0.1, abs=1e-9)


def test_t_value_scan_finds_the_fixed_point_iterations_fit():
    _, pdf = sprt._pdf(np.array(LOPSIDED, dtype=float))
    fitted = sprt.mle_with_t_value(pdf, 0.08)
    assert sprt._t_value_scan(pdf, 0.08) == pytest.approx(fitted, abs=1e-7)


def test_estimate_reads_the_regularised_counts_as_the_llr_does():
    """Pairs that all split 1-1 still give an interval around 0 and a LOS of 1/2; the
    standard error is that of the regularised counts (variance and number alike)."""
    counts = np.array([0, 0, 40, 0, 0])
    split = sprt.estimate(counts)
    total, pdf = sprt._pdf(counts)
    mu, var = sprt._moments(pdf)
    error = math.sqrt(var / total)
    assert split.elo_low < 0 < split.elo_high
    assert split.elo_high == pytest.approx(-400 * math.log10(1 / (mu + 1.959964 * error) - 1))
    assert split.los == pytest.approx(0.5)
