"""The Elo scale and the normal distribution's tails, defined once. No Django here.

Every statistic of the arena reads these: the moving Elo (``cardkit.stats.elo``), the
Bradley-Terry fit (``cardkit.stats.bradley_terry``), the versions' fit
(``tournaments.version_ratings``), the sequential test (``cardkit.stats.sprt``) and the
ladder's pairing (``tournaments.pairing``), so a clip or a constant cannot differ
between two of them.

The tails are computed as tails: ``normal_sf(x)`` is ``erfc(x / sqrt 2) / 2``, exact to
the last digit down to 1e-308 (``1 - NormalDist().cdf(x)`` is 0 past 8.3 sigma), and
``log_normal_sf`` goes on in log space where even that underflows (past 37.5 sigma).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

ELO_PER_NATURAL_UNIT = 400.0 / math.log(10.0)
# Every rating fit's Newton step is capped at this many Elo, so that a poor start (a
# player who won or lost everything) cannot overshoot; the fits converge within it.
MAX_ELO_STEP = 400.0
# A score of exactly 0 or 1 has no finite Elo: scores are read as at least this far from
# both ends, which bounds any Elo read from a score at about +-3,600.
SCORE_CLIP = 1e-9
Z95 = NormalDist().inv_cdf(0.975)


def logistic_score(elo: float | np.ndarray) -> float | np.ndarray:
    """Return the expected score of a player ``elo`` Elo above its opponent (0 to 1)."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(elo, dtype=float) / 400.0))


def elo_of_score(score: float | np.ndarray) -> float | np.ndarray:
    """Return the Elo difference whose expected score is ``score`` (clipped, see above)."""
    score = np.clip(np.asarray(score, dtype=float), SCORE_CLIP, 1.0 - SCORE_CLIP)
    return -400.0 * np.log10(1.0 / score - 1.0)


def clip_step(step: float | np.ndarray, *, unit: float = 1.0) -> float | np.ndarray:
    """Return a Newton step capped at ``MAX_ELO_STEP``; ``unit`` is the step's unit in Elo
    (``ELO_PER_NATURAL_UNIT`` for a step in natural log-odds)."""
    limit = MAX_ELO_STEP / unit
    return np.clip(step, -limit, limit)


def normal_cdf(x: float) -> float:
    """Return P(Z <= x) for a standard normal Z, accurate in the lower tail."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_sf(x: float) -> float:
    """Return P(Z > x) for a standard normal Z, accurate in the upper tail."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def log_normal_sf(x: float) -> float:
    """Return log P(Z > x), finite for every finite x (no underflow to log 0)."""
    if x < 30.0:
        return math.log(normal_sf(x))
    # Mills' ratio, asymptotic: sf(x) = phi(x) / x * (1 - 1/x^2 + 3/x^4 - 15/x^6 ...);
    # at x >= 30 the terms left out are below 1e-10 of the sum.
    inverse = 1.0 / (x * x)
    series = 1.0 - inverse + 3.0 * inverse**2 - 15.0 * inverse**3
    return -0.5 * x * x - math.log(x) - 0.5 * math.log(2.0 * math.pi) + math.log(series)


def normal_quantile(p: float) -> float:
    """Return the x with P(Z <= x) = p."""
    return NormalDist().inv_cdf(p)
