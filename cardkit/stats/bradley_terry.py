"""Batch Bradley-Terry fit of match results, with bootstrap intervals. No Django here.

Fixed-K Elo follows the last few results and never settles in a game with this much
luck, so a leaderboard's order comes from a fit over every result at once, the way the
BayesElo and Ordo rating lists of computer chess do it:

- Each match is decomposed into two-player games as in ``cardkit.stats.elo``: the loser
  lost to each other player and every two non-losers drew (half a win each), so a
  match without a loser is a draw between every two of its players.
- The model: ``P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400))``, ratings on the Elo
  scale. The fit maximises the likelihood by Newton's method.
- A weak prior, as BayesElo's: ``prior_draws`` virtual draws between every two players
  who met, and a trace of one (``1e-3``) between every two players, so that a player
  who won or lost everything still has a finite rating and the fit is defined when the
  results split the players into groups that never met.
- The scale is anchored: ``anchor`` (the built-in `random` bot) is held at
  ``anchor_rating``; without an anchor in the data the mean is held there.
- Uncertainty: a bootstrap over matches (resample the matches with replacement, refit).
  The interval holds the middle ``confidence`` of a player's bootstrap ratings. A
  bootstrap cannot see what the data never showed (three wins out of three resample to
  three wins out of three), so the interval is widened where needed to the normal
  interval of the likelihood's curvature (with the prior), as BayesElo computes it.
  The likelihood of superiority of a player over the next one down is
  ``Phi(difference / sd)``, with the larger of the two estimates of the difference's
  spread.

Matches with the same table and loser are the same outcome, so both the fit and the
bootstrap work on the counts of distinct outcomes: a resample is one multinomial draw
of those counts, and 100,000 matches cost no more than the few hundred outcomes in them.

Linked deals (``groups``): the deals of one duplicate ladder table, one deck in every
seat rotation, share the deck's luck, which the rotations cancel. The point estimate is
the same as for independent deals, but the bootstrap resamples whole tables, and the
floor of the spread is the cluster-robust (sandwich) variance of the tables' scores
instead of the curvature, which would count every deal as independent and so give back
the luck that the rotations removed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from cardkit.stats.scales import ELO_PER_NATURAL_UNIT, clip_step, normal_cdf, normal_quantile

CONNECTING_DRAWS = 1e-3
INTERVALS = ("both", "bootstrap", "curvature")
# Past this many players the bootstraps are fitted in smaller batches to bound memory.
_BATCH_CELLS = 4_000_000


@dataclass(frozen=True, slots=True)
class FitEntry:
    """One player's line of a fit, best first."""

    player: Hashable
    rating: float
    low: float
    high: float
    los: float | None  # likelihood of superiority over the next player down; None for the last
    games: int
    losses: int


def fit_ratings(
    tables: Sequence[Sequence[Hashable]],
    losers: Sequence[int | None],
    *,
    anchor: Hashable | None = None,
    anchor_rating: float = 1500.0,
    prior_draws: float = 2.0,
    bootstraps: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
    groups: Sequence[Hashable | None] | None = None,
    counts: Sequence[float] | None = None,
    interval: str = "both",
) -> list[FitEntry]:
    """Return the fitted ratings of every player in ``tables``, best first.

    ``tables[m]`` lists the players of match ``m`` seat by seat and ``losers[m]`` is the
    losing seat, or None for a drawn match. A player's ``games`` counts every match he
    played, drawn or not, and ``losses`` the matches he lost. ``groups[m]``, when given,
    names the duplicate table that match ``m`` is a deal of (None: a deal of its own);
    the deals of one group are resampled together and their luck counted once.
    ``counts[m]``, when given, says that match ``m`` (or its whole group) happened that
    many times: a caller that has counted its distinct outcomes passes each once.
    ``interval`` is ``"both"`` (the leaderboard's: the wider of the two below),
    ``"bootstrap"`` (the bootstrap's percentiles) or ``"curvature"`` (the normal
    interval of the curvature, or of the sandwich with ``groups``); the last two are
    for ``benchmarks.rating_coverage``, which measures each.
    """
    if interval not in INTERVALS:
        raise ValueError(f"interval is one of {', '.join(INTERVALS)}, not {interval!r}")
    if len(tables) != len(losers) or any(
        extra is not None and len(extra) != len(tables) for extra in (groups, counts)
    ):
        raise ValueError("tables, losers, groups and counts must have the same length")
    players: dict[Hashable, int] = {}
    games: Counter[int] = Counter()
    lost: Counter[int] = Counter()
    linked: dict[Hashable, list[tuple[tuple[int, ...], int]]] = {}
    times: dict[Hashable, int] = {}
    outcomes: Counter[tuple[tuple[tuple[int, ...], int], ...]] = Counter()
    for number, (table, loser) in enumerate(zip(tables, losers, strict=True)):
        coded = tuple(players.setdefault(player, len(players)) for player in table)
        if len(set(coded)) != len(coded):
            raise ValueError(f"a player sits twice at one table: {list(table)}")
        count = 1 if counts is None else counts[number]
        for player in coded:
            games[player] += count
        if loser is not None:
            lost[coded[loser]] += count
        group = groups[number] if groups is not None else None
        if group is None:
            outcomes[((coded, loser),)] += count
        else:
            linked.setdefault(group, []).append((coded, loser))
            times[group] = count
    for group, deals in linked.items():
        outcomes[tuple(deals)] += times[group]
    size = len(players)
    if not size:
        return []

    first, second, score, outcome_of_pair, counts = _pair_arrays(outcomes)
    met = np.zeros((size, size))
    if len(first):
        met[first, second] = met[second, first] = 1.0
    prior = (prior_draws / 2.0) * met + CONNECTING_DRAWS / 2.0
    np.fill_diagonal(prior, 0.0)

    anchor_index = players.get(anchor) if anchor is not None else None
    wins = _wins(size, first, second, score, counts[outcome_of_pair]) + prior
    theta = _newton(wins[None])
    ratings = _to_elo(theta, anchor_index, anchor_rating)[0]
    covariance = _covariance(theta[0], wins, anchor_index)
    if linked:
        covariance = _sandwich(
            theta[0], covariance, first, second, score, outcome_of_pair, counts
        )
    covariance *= ELO_PER_NATURAL_UNIT**2

    if bootstraps and counts.sum():
        rng = np.random.default_rng(seed)
        total = int(counts.sum())
        draws = rng.multinomial(total, counts / total, size=bootstraps).astype(float)
        batch = max(1, _BATCH_CELLS // (size * size))
        samples = []
        for start in range(0, bootstraps, batch):
            chunk = draws[start : start + batch]
            stacked = np.stack(
                [_wins(size, first, second, score, row[outcome_of_pair]) for row in chunk]
            )
            samples.append(_to_elo(_newton(stacked + prior), anchor_index, anchor_rating))
        boot = np.concatenate(samples)
    else:
        boot = ratings[None]

    tail = (1.0 - confidence) / 2.0
    z = normal_quantile(1.0 - tail)
    spread = z * np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    boot_low = np.percentile(boot, tail * 100.0, axis=0)
    boot_high = np.percentile(boot, 100.0 - tail * 100.0, axis=0)
    low, high = {
        "both": (np.minimum(boot_low, ratings - spread), np.maximum(boot_high, ratings + spread)),
        "bootstrap": (boot_low, boot_high),
        "curvature": (ratings - spread, ratings + spread),
    }[interval]
    order = sorted(range(size), key=lambda i: (-ratings[i], i))
    names = list(players)
    entries = []
    for rank, i in enumerate(order):
        los = None
        if rank + 1 < size:
            j = order[rank + 1]
            variance = max(
                float(np.var(boot[:, i] - boot[:, j])),
                float(covariance[i, i] + covariance[j, j] - 2.0 * covariance[i, j]),
            )
            difference = float(ratings[i] - ratings[j])
            los = normal_cdf(difference / math.sqrt(variance)) if variance > 0 else 1.0
        entries.append(
            FitEntry(
                player=names[i],
                rating=float(ratings[i]),
                low=float(low[i]),
                high=float(high[i]),
                los=los,
                games=games[i],
                losses=lost[i],
            )
        )
    return entries


def _pair_arrays(
    outcomes: Counter[tuple[tuple[tuple[int, ...], int], ...]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return the two-player games of each distinct outcome as flat arrays.

    An outcome is the (table, loser) of each of its deals (one, unless linked). Pair
    ``p`` says ``first[p]`` scored ``score[p]`` against ``second[p]`` once per match of
    outcome ``outcome_of_pair[p]``, which happened ``counts[outcome]`` times.
    """
    first, second, score, owner = [], [], [], []
    counts = []
    for number, (deals, count) in enumerate(outcomes.items()):
        counts.append(count)
        for table, loser in deals:
            for a in range(len(table)):
                for b in range(a + 1, len(table)):
                    first.append(table[a])
                    second.append(table[b])
                    score.append(0.0 if a == loser else 1.0 if b == loser else 0.5)
                    owner.append(number)
    as_int = {"dtype": np.intp}
    return (
        np.array(first, **as_int),
        np.array(second, **as_int),
        np.array(score),
        np.array(owner, **as_int),
        np.array(counts, dtype=float),
    )


def _wins(
    size: int, first: np.ndarray, second: np.ndarray, score: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """Return the matrix of (possibly fractional) wins of row over column."""
    flat = np.bincount(first * size + second, weights=weight * score, minlength=size * size)
    flat += np.bincount(
        second * size + first, weights=weight * (1.0 - score), minlength=size * size
    )
    return flat.reshape(size, size)


def _newton(wins: np.ndarray, *, iterations: int = 100, tolerance: float = 1e-10) -> np.ndarray:
    """Return the maximum-likelihood strengths (natural log scale) for a stack of win matrices.

    ``wins`` has shape (fits, players, players). Player 0's strength is held at 0; the
    caller re-anchors. Steps are capped so that a poor start cannot overshoot.
    """
    fits, size, _ = wins.shape
    theta = np.zeros((fits, size))
    if size == 1:
        return theta
    played = wins + wins.transpose(0, 2, 1)
    scored = wins.sum(axis=2)
    for _ in range(iterations):
        difference = theta[:, :, None] - theta[:, None, :]
        p = 1.0 / (1.0 + np.exp(-difference))
        gradient = scored - (played * p).sum(axis=2)
        curvature = played * p * (1.0 - p)
        hessian = -curvature
        diagonal = np.arange(size)
        hessian[:, diagonal, diagonal] = curvature.sum(axis=2)
        step = np.linalg.solve(hessian[:, 1:, 1:], gradient[:, 1:, None])[:, :, 0]
        step = clip_step(step, unit=ELO_PER_NATURAL_UNIT)
        theta[:, 1:] += step
        if np.abs(step).max() < tolerance:
            break
    return theta


def _covariance(theta: np.ndarray, wins: np.ndarray, anchor: int | None) -> np.ndarray:
    """Return the covariance of the strengths from the curvature of the log-likelihood.

    With an anchor the strengths are measured from the anchor's (whose variance is 0);
    without one, from their mean.
    """
    size = len(theta)
    played = wins + wins.T
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    curvature = played * p * (1.0 - p)
    hessian = -curvature
    np.fill_diagonal(hessian, curvature.sum(axis=1))
    if anchor is None:
        return np.linalg.pinv(hessian)
    keep = [i for i in range(size) if i != anchor]
    covariance = np.zeros((size, size))
    if keep:
        covariance[np.ix_(keep, keep)] = np.linalg.inv(hessian[np.ix_(keep, keep)])
    return covariance


def _sandwich(
    theta: np.ndarray,
    bread: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    score: np.ndarray,
    outcome_of_pair: np.ndarray,
    counts: np.ndarray,
) -> np.ndarray:
    """Return the cluster-robust covariance ``bread @ meat @ bread`` of the strengths.

    ``bread`` is the inverse curvature (``_covariance``); the meat sums, over the
    distinct outcomes (a linked table is one), the outer product of the outcome's score
    residuals, so that deals whose luck cancels count for what their sum shows.
    """
    size = len(theta)
    residual = score - 1.0 / (1.0 + np.exp(-(theta[first] - theta[second])))
    gradient = np.zeros((len(counts), size))
    np.add.at(gradient, (outcome_of_pair, first), residual)
    np.add.at(gradient, (outcome_of_pair, second), -residual)
    meat = (gradient * counts[:, None]).T @ gradient
    return bread @ meat @ bread


def _to_elo(theta: np.ndarray, anchor: int | None, anchor_rating: float) -> np.ndarray:
    """Return strengths as Elo-scale ratings with the anchor (or the mean) at anchor_rating."""
    reference = theta[:, anchor][:, None] if anchor is not None else theta.mean(1, keepdims=True)
    return anchor_rating + (theta - reference) * ELO_PER_NATURAL_UNIT
