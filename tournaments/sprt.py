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
from statistics import NormalDist

import numpy as np

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


def logistic_score(elo: float | np.ndarray) -> float | np.ndarray:
    """The expected score of a player ``elo`` logistic Elo above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(elo) / 400.0))


def logistic_elo(score: float | np.ndarray) -> float | np.ndarray:
    score = np.clip(np.asarray(score, dtype=float), 1e-9, 1 - 1e-9)
    return -400.0 * np.log10(1.0 / score - 1.0)


def _pdf(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = np.maximum(np.asarray(counts, dtype=float), EMPTY_COUNT)
    total = counts.sum(axis=-1)
    return total, counts / total[..., None]


def _moments(pdf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = (pdf * PAIR_SCORES).sum(axis=-1)
    var = (pdf * (PAIR_SCORES - mu[..., None]) ** 2).sum(axis=-1)
    return mu, var


def mle_with_mean(pdf: np.ndarray, score: float) -> np.ndarray:
    """The distribution nearest ``pdf`` (maximum likelihood) whose mean is ``score``.

    It is ``pdf_i / (1 + theta * (a_i - score))`` for the ``theta`` that makes it sum to
    one; that equation is monotone in ``theta`` on the interval where every term stays
    positive, so safeguarded Newton steps find it, vectorised over the leading axes.
    """
    a = PAIR_SCORES - score
    low = np.full(pdf.shape[:-1], -1.0 / a.max() + 1e-12)
    high = np.full(pdf.shape[:-1], -1.0 / a.min() - 1e-12)
    theta = np.zeros(pdf.shape[:-1])
    for _ in range(100):
        denominator = 1.0 + theta[..., None] * a
        f = (pdf * a / denominator).sum(axis=-1)
        df = -(pdf * a * a / denominator**2).sum(axis=-1)
        # f decreases in theta: a positive f means the root lies above.
        low = np.where(f > 0, theta, low)
        high = np.where(f > 0, high, theta)
        step = theta - f / df
        inside = (step > low) & (step < high)
        new = np.where(inside, step, (low + high) / 2)
        if np.all(np.abs(new - theta) < 1e-13):
            theta = new
            break
        theta = new
    p = pdf / (1.0 + theta[..., None] * a)
    return p / p.sum(axis=-1, keepdims=True)


def llr(counts, elo0: float, elo1: float, *, model: str = "normalized") -> np.ndarray | float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``)."""
    if model not in MODELS:
        raise ValueError(f"unknown Elo model {model!r}: one of {', '.join(MODELS)}")
    counts = np.asarray(counts, dtype=float)
    total, pdf = _pdf(counts)
    if model == "logistic":
        p0 = mle_with_mean(pdf, float(logistic_score(elo0)))
        p1 = mle_with_mean(pdf, float(logistic_score(elo1)))
        value = total * (pdf * np.log(p1 / p0)).sum(axis=-1)
    else:
        # Fishtest's LLR_normalized: the t-value of the pair scores against the two
        # hypotheses' t-values; a pair is two games, hence sigma of one game is
        # sqrt(2 * var) of the halved pair score, and 2N games.
        mu, var = _moments(pdf)
        t = (mu - 0.5) / np.sqrt(2.0 * var)
        t0, t1 = elo0 / NELO_PER_T, elo1 / NELO_PER_T
        value = total * np.log((1 + (t - t0) ** 2) / (1 + (t - t1) ** 2))
    # No pairs, no evidence.
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
    _, pdf = _pdf(counts)
    mu, var = (float(x) for x in _moments(pdf))
    error = math.sqrt(var / pairs)
    z = NormalDist().inv_cdf(0.975)
    los = NormalDist().cdf((mu - 0.5) / error) if error > 0 else float(mu > 0.5)
    nelo = NELO_PER_T * (mu - 0.5) / math.sqrt(2.0 * var) if var > 0 else 0.0
    return Estimate(
        pairs=pairs,
        score=mu,
        elo=float(logistic_elo(mu)),
        elo_low=float(logistic_elo(mu - z * error)),
        elo_high=float(logistic_elo(mu + z * error)),
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
    z = NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(1 - beta)
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
