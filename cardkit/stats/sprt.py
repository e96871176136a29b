"""The sequential test of "is the candidate better than the baseline?" on paired deals.

A pair is two games on one deck (see ``docs/sequential-tests.md``), and its outcome is
the candidate's points over the two: 0, 0.5, 1, 1.5 or 2. The counts of those five
outcomes (the pentanomial counts, as Fishtest shows them) are all the test reads. The
statistic is Fishtest's generalised SPRT (Michel Van den Bergh, "Comments on
normalized Elo", 2020): the log-likelihood ratio of the two hypotheses, each fitted to
the counts by maximum likelihood under its constraint, compared with Wald's bounds.

Two scales for the hypotheses' Elo:

- ``normalized`` (the default): the expected score's distance from 1/2 in units of the
  game's own noise, ``nElo = 800 / ln 10 * (mu - 1/2) / sigma`` with ``sigma`` the
  standard deviation of one game's score. A test's expected length then depends on the
  bounds and the error rates only, whatever the shape's luck; and pairing, which takes
  the deal's luck out of ``sigma``, shows as a larger nElo for the same skill.
- ``logistic``: the Elo of the expected score, ``mu = 1 / (1 + 10 ** (-elo / 400))``,
  the unit of the leaderboards.

Everything here is pure numpy on count arrays whose last axis has the five outcomes, so
one call scores a single test or thousands of simulated ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cardkit.stats.scales import elo_of_score, logistic_score, normal_cdf, normal_quantile

# Pair scores scaled to [0, 1]: the candidate's points over the two games, halved.
PAIR_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
NELO_PER_T = 800.0 / math.log(10.0)
MODELS = ("normalized", "logistic")
# Fishtest's stand-in for an empty count, so that the fit never takes the log of zero.
EMPTY_COUNT = 1e-3


def game_score(loser: int | None, seat: int) -> float:
    """A seat's score in one game: 0 for the loser, 1/2 for a draw, 1 otherwise."""
    return 0.5 if loser is None else 0.0 if loser == seat else 1.0


def pair_outcome(candidate: float, baseline: float) -> int:
    """The pair's outcome as an index into the five counts (0 .. 4).

    ``candidate`` and ``baseline`` are the two games' scores of the candidate's seat and of
    the baseline's seat: in a head-to-head pair the baseline's seat of one game is the
    candidate's opponent, so pass the candidate's two scores as ``candidate`` and
    ``1 - second``; in a reference pair pass the candidate's and the baseline's scores.
    """
    return round(2 * (candidate + 1.0 - baseline))


def llr_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds: accept H0 below the first, H1 above the second."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _pdf(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = np.maximum(np.asarray(counts, dtype=float), EMPTY_COUNT)
    total = counts.sum(axis=-1)
    return total, counts / total[..., None]


def _moments(pdf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = (pdf * PAIR_SCORES).sum(axis=-1)
    var = (pdf * (PAIR_SCORES - mu[..., None]) ** 2).sum(axis=-1)
    return mu, var


def _secular(pdf: np.ndarray, b: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """The root ``x`` of ``sum_i pdf_i * b_i / (1 + x * b_i) = 0``, vectorised over rows.

    ``b`` must take both signs in each row. The left side decreases in ``x`` on the
    interval where every ``1 + x * b_i`` stays positive, so safeguarded Newton steps from
    ``start`` (0 by default) find the root, bisecting when a step leaves the bracket.
    """
    low = -1.0 / b.max(axis=-1) * (1 - 1e-12)
    high = -1.0 / b.min(axis=-1) * (1 - 1e-12)
    x = np.zeros(pdf.shape[:-1]) if start is None else np.clip(start, low, high)
    for _ in range(200):
        denominator = 1.0 + x[..., None] * b
        f = (pdf * b / denominator).sum(axis=-1)
        df = -(pdf * b * b / denominator**2).sum(axis=-1)
        # f decreases in x: a positive f means the root lies above.
        low = np.where(f > 0, x, low)
        high = np.where(f > 0, high, x)
        step = x - f / df
        # Inclusive: at the root a Newton step lands on the bracket's end it just moved.
        inside = (step >= low) & (step <= high)
        new = np.where(inside, step, (low + high) / 2)
        if np.all(np.abs(new - x) <= 1e-13 * np.maximum(1.0, np.abs(x))):
            return new
        x = new
    return x


def mle_with_mean(pdf: np.ndarray, score: float) -> np.ndarray:
    """The distribution nearest ``pdf`` (maximum likelihood) whose mean is ``score``.

    It is ``pdf_i / (1 + x * (a_i - score))`` for the Lagrange multiplier ``x`` that
    makes it sum to one (a root of the secular equation, ``_secular``).
    """
    b = np.broadcast_to(PAIR_SCORES - score, pdf.shape)
    p = pdf / (1.0 + _secular(pdf, b)[..., None] * b)
    return p / p.sum(axis=-1, keepdims=True)


def _t_value_candidate(
    pdf: np.ndarray, t: float, sigma: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The Lagrange form ``pdf_i / (1 + x * b_i)`` for a guessed ``sigma`` of the fit.

    With the fit's sigma given, its mean is ``1/2 + t * sigma`` and ``b`` (the gradient
    of the constraint) is fixed, so one secular root ``x`` gives a distribution that sums
    to one. Return it and how far its own mean falls from the guessed one; a zero of that
    gap is a critical point of the constrained likelihood. Rows whose ``b`` does not take
    both signs have no such distribution: their gap is NaN.
    """
    mu = 0.5 + t * sigma
    b = PAIR_SCORES - 0.5 - t * sigma[..., None] / 2 - t * (PAIR_SCORES - mu[..., None]) ** 2 / (
        2 * sigma[..., None]
    )
    valid = (b.max(axis=-1) > 0) & (b.min(axis=-1) < 0)
    b = np.where(valid[..., None], b, PAIR_SCORES - 0.5)
    p = pdf / (1.0 + _secular(pdf, b)[..., None] * b)
    gap = np.where(valid, (p * PAIR_SCORES).sum(axis=-1) - mu, np.nan)
    return p, gap


def _t_value_scan(pdf: np.ndarray, t: float, *, points: int = 96) -> np.ndarray:
    """Every critical point of the constrained likelihood along sigma; the best one.

    The fit's sigma lies in (0, 1/2 / sqrt(1 + t^2)] (a distribution on [0, 1] with mean
    ``1/2 + t * sigma`` has no larger sigma). A geometric grid of ``points`` values
    brackets the zeros of the gap of ``_t_value_candidate``; bisection refines each, and
    the one of highest likelihood is the fit. Slow and sure: ``mle_with_t_value`` uses
    it for the rows its fixed-point iteration does not settle.
    """
    top = 0.5 / math.sqrt(1.0 + t * t)
    grid = top * np.geomspace(1e-5, 1.0 - 1e-9, points)
    rows = pdf.shape[0]
    sigma = np.broadcast_to(grid, (rows, points))
    _, gap = _t_value_candidate(pdf[:, None, :], t, sigma)
    # Brackets of a zero: a change of sign between neighbours (a NaN gap brackets none).
    row, k = np.nonzero((gap[:, :-1] * gap[:, 1:]) <= 0)
    low, high, g_low = grid[k], grid[k + 1], gap[row, k]
    stacked = pdf[row]
    for _ in range(60):
        middle = (low + high) / 2
        _, g_middle = _t_value_candidate(stacked, t, middle)
        same = np.sign(g_middle) == np.sign(g_low)
        low, g_low = np.where(same, middle, low), np.where(same, g_middle, g_low)
        high = np.where(same, high, middle)
    p, _ = _t_value_candidate(stacked, t, (low + high) / 2)
    likelihood = (stacked * np.log(p)).sum(axis=-1)
    best = np.full(rows, -np.inf)
    fit = np.full_like(pdf, np.nan)
    for index in np.argsort(likelihood):
        # Ascending, so the last written for a row is its most likely critical point.
        best[row[index]] = likelihood[index]
        fit[row[index]] = p[index]
    return fit


def mle_with_t_value(pdf: np.ndarray, t: float) -> np.ndarray:
    """The distribution nearest ``pdf`` (maximum likelihood) whose t-value is ``t``.

    The t-value is ``(mu - 1/2) / sigma`` of the pair score (Van den Bergh, "Normalized
    Elo: practical considerations", section 4.1). At the constrained maximum
    ``p_i = pdf_i / (1 + x * b_i)``, with ``b_i`` the constraint's gradient at ``p``:
    ``a_i - 1/2 - t * sigma * (1 + ((mu - a_i) / sigma) ** 2) / 2``, which depends on
    ``p``'s own ``mu`` and ``sigma``. As Fishtest's ``MLE_t_value`` this iterates from the
    uniform distribution: ``b`` from the current ``p``, the Lagrange multiplier ``x``
    from the secular equation (a 1-D root, ``_secular``), a new ``p``; vectorised over
    rows, each row until it settles (Fishtest stops after ten rounds). A row that does
    not settle, or settles off the constraint, is solved by ``_t_value_scan``, which
    finds every critical point along sigma and keeps the most likely.
    """
    pdf = np.asarray(pdf, dtype=float)
    if t == 0:
        return mle_with_mean(pdf, 0.5)
    shape = pdf.shape
    pdf = pdf.reshape(-1, 5)
    # From the uniform distribution, as Fishtest: from ``pdf`` itself, lopsided counts
    # give a sigma so small that the first ``b`` has one sign only.
    p = np.full_like(pdf, 0.2)
    x = np.zeros(len(pdf))
    active = np.ones(len(pdf), dtype=bool)
    with np.errstate(all="ignore"):
        for _ in range(200):
            rows = np.flatnonzero(active)
            if not len(rows):
                break
            current = p[rows]
            mu, var = _moments(current)
            sigma = np.sqrt(var)[:, None]
            b = PAIR_SCORES - 0.5 - t * sigma * (1 + ((mu[:, None] - PAIR_SCORES) / sigma) ** 2) / 2
            usable = np.isfinite(b).all(axis=-1) & (b.max(axis=-1) > 0) & (b.min(axis=-1) < 0)
            # A row without a usable b leaves the loop for the scan.
            active[rows[~usable]] = False
            rows, current, b = rows[usable], current[usable], b[usable]
            x[rows] = _secular(pdf[rows], b, x[rows])
            new = pdf[rows] / (1.0 + x[rows, None] * b)
            new /= new.sum(axis=-1, keepdims=True)
            p[rows] = new
            active[rows[np.abs(new - current).max(axis=-1) < 1e-12]] = False
        mu, var = _moments(p)
        settled = ~active & (np.abs(mu - 0.5 - t * np.sqrt(var)) < 1e-9)
    if not settled.all():
        p[~settled] = _t_value_scan(pdf[~settled], t)
    return p.reshape(shape)


def llr(counts, elo0: float, elo1: float, *, model: str = "normalized") -> np.ndarray | float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    Each hypothesis' distribution is the maximum-likelihood fit to the (regularised)
    counts under its constraint: a mean score for ``logistic``, a t-value for
    ``normalized`` (Fishtest's ``LLR_logistic`` and ``LLR_normalized``).
    """
    if model not in MODELS:
        raise ValueError(f"unknown Elo model {model!r}: one of {', '.join(MODELS)}")
    counts = np.asarray(counts, dtype=float)
    total, pdf = _pdf(counts)
    if model == "logistic":
        p0 = mle_with_mean(pdf, float(logistic_score(elo0)))
        p1 = mle_with_mean(pdf, float(logistic_score(elo1)))
    else:
        # A pair is two games, so the t-value of the pair score is sqrt(2) times that of
        # one game's score: sigma of one game is sqrt(2 * var) of the halved pair score.
        p0 = mle_with_t_value(pdf, math.sqrt(2.0) * elo0 / NELO_PER_T)
        p1 = mle_with_t_value(pdf, math.sqrt(2.0) * elo1 / NELO_PER_T)
    value = total * (pdf * np.log(p1 / p0)).sum(axis=-1)
    # No pairs, no evidence.
    value = np.where(counts.sum(axis=-1) > 0, value, 0.0)
    return float(value) if value.ndim == 0 else value


def llr_normalized_approximation(counts, elo0: float, elo1: float) -> np.ndarray | float:
    """Fishtest's ``LLR_normalized_alt``: the closed-form approximation of the normalised
    LLR (Van den Bergh, section 4.2). Close to ``llr`` on ordinary counts, far from it on
    lopsided ones (it never accepts a candidate that wins every pair); kept to compare."""
    counts = np.asarray(counts, dtype=float)
    total, pdf = _pdf(counts)
    mu, var = _moments(pdf)
    t = (mu - 0.5) / np.sqrt(2.0 * var)
    t0, t1 = elo0 / NELO_PER_T, elo1 / NELO_PER_T
    value = total * np.log((1 + (t - t0) ** 2) / (1 + (t - t1) ** 2))
    value = np.where(counts.sum(axis=-1) > 0, value, 0.0)
    return float(value) if value.ndim == 0 else value


@dataclass(frozen=True)
class Estimate:
    pairs: int
    score: float  # the candidate's expected score per game, in [0, 1]
    elo: float
    elo_low: float
    elo_high: float
    nelo: float
    los: float  # likelihood of superiority: P(candidate better), normal approximation


def estimate(counts) -> Estimate:
    """The logistic Elo with its 95% interval, the normalised Elo and the LOS."""
    counts = np.asarray(counts, dtype=float)
    pairs = int(counts.sum())
    if pairs == 0:
        return Estimate(0, 0.5, 0.0, -math.inf, math.inf, 0.0, 0.5)
    # The regularised counts, as the LLR reads them: their variance is never 0, so that
    # pairs that all ended alike still give an interval and a LOS short of certainty.
    total, pdf = _pdf(counts)
    mu, var = (float(x) for x in _moments(pdf))
    error = math.sqrt(var / float(total))
    z = normal_quantile(0.975)
    los = normal_cdf((mu - 0.5) / error)
    nelo = NELO_PER_T * (mu - 0.5) / math.sqrt(2.0 * var) if var > 0 else 0.0
    return Estimate(
        pairs=pairs,
        score=mu,
        elo=float(elo_of_score(mu)),
        elo_low=float(elo_of_score(mu - z * error)),
        elo_high=float(elo_of_score(mu + z * error)),
        nelo=nelo,
        los=los,
    )


def decision(llr_value: float, alpha: float, beta: float) -> str:
    """``"H0"`` (the candidate is not better by ``elo1``), ``"H1"`` or ``""`` (go on)."""
    low, high = llr_bounds(alpha, beta)
    if llr_value <= low:
        return "H0"
    if llr_value >= high:
        return "H1"
    return ""


# ---- distributions for simulation and planning -------------------------------------------

# An even pentanomial of two equal players in a lucky game: most pairs split 1-1.
EVEN_PAIRS = np.array([0.05, 0.2, 0.5, 0.2, 0.05])


def tilted(base: np.ndarray, *, score: float) -> np.ndarray:
    """``base`` exponentially tilted to mean ``score`` (scaled pair score, in (0, 1))."""
    def mean(lam: float) -> float:
        w = base * np.exp(lam * PAIR_SCORES)
        return float((w * PAIR_SCORES).sum() / w.sum())

    low, high = -60.0, 60.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if mean(middle) < score else (low, middle)
    w = base * np.exp((low + high) / 2 * PAIR_SCORES)
    return w / w.sum()


def pairs_with_elo(elo: float, *, model: str = "normalized", base=EVEN_PAIRS) -> np.ndarray:
    """A pentanomial distribution whose true difference is ``elo`` on ``model``'s scale."""
    base = np.asarray(base, dtype=float)
    if model == "logistic":
        return tilted(base, score=float(logistic_score(elo)))
    target = elo / NELO_PER_T
    low, high = 1e-6, 1 - 1e-6
    for _ in range(200):
        middle = (low + high) / 2
        mu, var = _moments(tilted(base, score=middle))
        t = (float(mu) - 0.5) / math.sqrt(2.0 * float(var))
        low, high = (middle, high) if t < target else (low, middle)
    return tilted(base, score=(low + high) / 2)


def fixed_pairs(pdf: np.ndarray, elo0: float, elo1: float, alpha: float, beta: float, *,
                model: str = "normalized") -> int:
    """Pairs a fixed-size test needs for the same error rates (normal approximation):
    reject H0 when the mean pair score passes a threshold between the two hypotheses,
    with the variance of ``pdf``."""
    _, var = _moments(np.asarray(pdf, dtype=float))
    sd = math.sqrt(float(var))
    if model == "logistic":
        gap = float(logistic_score(elo1) - logistic_score(elo0))
    else:
        gap = (elo1 - elo0) / NELO_PER_T * math.sqrt(2.0) * sd
    z = normal_quantile(1 - alpha) + normal_quantile(1 - beta)
    return math.ceil((z * sd / gap) ** 2)


@dataclass(frozen=True)
class Simulation:
    runs: int
    accepted_h1: int
    undecided: int
    mean_pairs: float
    median_pairs: float


def simulate(pdf, elo0: float, elo1: float, alpha: float, beta: float, *, runs: int,
             max_pairs: int, model: str = "normalized", seed: int = 0,
             check_every: int = 1) -> Simulation:
    """Run ``runs`` sequential tests on pairs drawn from ``pdf`` (vectorised), checking the
    LLR after every ``check_every`` pairs, and count how each ended."""
    rng = np.random.default_rng(seed)
    low, high = llr_bounds(alpha, beta)
    counts = np.zeros((runs, 5))
    done = np.zeros(runs, dtype=bool)
    accepted = np.zeros(runs, dtype=bool)
    length = np.full(runs, max_pairs)
    pairs = 0
    while pairs < max_pairs and not done.all():
        active = ~done
        step = min(check_every, max_pairs - pairs)
        counts[active] += rng.multinomial(step, pdf, size=int(active.sum()))
        pairs += step
        value = llr(counts[active], elo0, elo1, model=model)
        index = np.flatnonzero(active)
        ended = (value <= low) | (value >= high)
        accepted[index[value >= high]] = True
        length[index[ended]] = pairs
        done[index[ended]] = True
    return Simulation(
        runs=runs,
        accepted_h1=int(accepted.sum()),
        undecided=int((~done).sum()),
        mean_pairs=float(length.mean()),
        median_pairs=float(np.median(length)),
    )
