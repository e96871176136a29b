"""Which rating model predicts held-out deals best: Bradley-Terry or Plackett-Luce.

    python -m benchmarks.rating_models [--shapes durak-2p,...] [--train 500,2000,all]

On the banks of ``benchmarks.ladder_power`` (its graded arenas, played already: run it
first), each model learns from the deals of the first half of the decks (``--train``
deals of them, drawn at random, or all) and predicts the loser of every deal of the
other half (drawn deals left out). The figure is the mean log-loss, ``-ln P(the actual
loser)``, lower is better; ``ln N`` is a coin's. The models:

- ``bt``: the leaderboard's fit (``fit_ratings``, pairwise Bradley-Terry: the loser lost
  to each other player, the others drew); a table's loser predicted with
  ``P(i) ∝ prod_j P(i loses to j)``;
- ``pl``: Plackett-Luce over the finishing order with ties as the rules score it (the
  fool last, the others tied): the fool is the first "worst" pick,
  ``P(i) = exp(-s_i) / sum_j exp(-s_j)``, fitted by maximum likelihood (Newton, the same
  weak prior as ``bt``: two virtual draws);
- ``openskill``: openskill's Plackett-Luce, updated deal by deal (ranks: fool 1, the
  others 0), a table's loser predicted from its ratings as ``pl`` does, on the scale
  openskill's own model uses (``exp(mu / c)``).
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.ladder_power import (
    DECKS,
    Outcomes,
    _init,
    anchor,
    bank_path,
    bank_results,
    epsilons,
    parse_shape,
    simulate,
    summary,
)
from cardkit.stats.bradley_terry import CONNECTING_DRAWS, fit_ratings
from cardkit.stats.scales import ELO_PER_NATURAL_UNIT, clip_step, normal_cdf

SHAPES = ("durak-2p", "durak-3p", "durak-4p", "volynshchik-3p", "volynshchik-4p")


def deals_of(shape: str, bank: np.ndarray, decks: range) -> list[tuple[tuple[int, ...], int]]:
    """Return the decided deals of the bank's ``decks`` as (seats, losing seat)."""
    _, players = parse_shape(shape)
    combos = list(itertools.combinations(range(len(epsilons(shape))), players))
    deals = []
    for t, table in enumerate(combos):
        for d in decks:
            for r in range(players):
                loser = int(bank[t, d, r])
                if loser >= 0:
                    seats = tuple(table[(s + r) % players] for s in range(players))
                    deals.append((seats, (loser - r) % players))
    return deals


def bt_predictor(shape: str, train):
    entries = fit_ratings([t for t, _ in train], [lo for _, lo in train],
                          anchor=anchor(shape), bootstraps=0)  # fmt: skip
    theta = {e.player: e.rating / ELO_PER_NATURAL_UNIT for e in entries}

    def predict(seats):
        s = [theta.get(p, 0.0) for p in seats]
        logs = [sum(-math.log1p(math.exp(s[i] - s[j])) for j in range(len(s)) if j != i)
                for i in range(len(s))]  # fmt: skip
        return _normalise(logs)

    return predict


def pl_fit(size: int, train, *, prior_draws: float = 2.0) -> np.ndarray:
    """Return the strengths of the fool-choice Plackett-Luce model (natural units)."""
    seats = np.array([t for t, _ in train])
    losers = np.array([lo for _, lo in train])
    theta = np.zeros(size)
    met = np.zeros((size, size))
    for table, _ in train:
        for a, b in itertools.combinations(table, 2):
            met[a, b] = met[b, a] = 1.0
    rows = np.arange(len(seats))
    for _ in range(100):
        badness = np.exp(-theta[seats])  # the weight of being picked as the fool
        p = badness / badness.sum(axis=1, keepdims=True)
        # d log L / d theta_k: -1 if k is the fool, + p_k for every seat k.
        gradient = np.zeros(size)
        np.add.at(gradient, seats[rows, losers], -1.0)
        np.add.at(gradient, seats, p)
        hessian = np.zeros((size, size))
        for a in range(seats.shape[1]):
            for b in range(seats.shape[1]):
                value = p[:, a] * ((a == b) - p[:, b])
                np.add.at(hessian, (seats[:, a], seats[:, b]), -value)
        # The prior: ``prior_draws`` virtual draws (pairwise logistic) between met players.
        d = theta[:, None] - theta[None, :]
        q = 1.0 / (1.0 + np.exp(-d))
        gradient += (prior_draws * met * (0.5 - q)).sum(axis=1)
        curvature = prior_draws * met * q * (1.0 - q)
        hessian -= np.diag(curvature.sum(axis=1)) - curvature
        keep = [i for i in range(size) if i != size - 1]
        step = np.linalg.solve(hessian[np.ix_(keep, keep)], -gradient[keep])
        step = clip_step(step, unit=ELO_PER_NATURAL_UNIT)
        theta[keep] += step
        if np.abs(step).max() < 1e-9:
            break
    return theta


def pl_predictor(shape: str, train):
    theta = pl_fit(len(epsilons(shape)), train)

    def predict(seats):
        return _normalise([-theta[p] for p in seats])

    return predict


def openskill_predictor(shape: str, train, seed: int):
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {p: model.rating() for p in range(len(epsilons(shape)))}
    order = list(train)
    random.Random(seed).shuffle(order)
    for seats, loser in order:
        teams = [[ratings[p]] for p in seats]
        ranks = [1 if s == loser else 0 for s in range(len(seats))]
        for p, (rated,) in zip(seats, model.rate(teams, ranks=ranks), strict=True):
            ratings[p] = rated

    def predict(seats):
        c = math.sqrt(sum(ratings[p].sigma ** 2 + model.beta**2 for p in seats))
        return _normalise([-ratings[p].mu / c for p in seats])

    return predict


def _normalise(logs: list[float]) -> list[float]:
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    total = sum(weights)
    return [w / total for w in weights]


def log_loss(predict, test) -> float:
    return -sum(math.log(max(predict(seats)[loser], 1e-12)) for seats, loser in test) / len(test)


# --- Games to a confident order: each model as the leaderboard of the simulated ladder ---


@dataclass(frozen=True, slots=True)
class Line:
    """A leaderboard line, as ``fit_ratings``'s entries: what the simulated ladder reads."""

    player: int
    rating: float
    low: float
    high: float
    los: float | None


def _lines(ratings: dict[int, float], covariance) -> list[Line]:
    """Return the lines best first; ``covariance(i, j)`` of the ratings (Elo scale)."""
    order = sorted(ratings, key=lambda p: (-ratings[p], p))
    lines = []
    for rank, p in enumerate(order):
        sd = math.sqrt(max(covariance(p, p), 0.0))
        los = None
        if rank + 1 < len(order):
            q = order[rank + 1]
            variance = covariance(p, p) + covariance(q, q) - 2.0 * covariance(p, q)
            difference = ratings[p] - ratings[q]
            los = normal_cdf(difference / math.sqrt(variance)) if variance > 0 else 1.0
        lines.append(Line(p, ratings[p], ratings[p] - 1.96 * sd, ratings[p] + 1.96 * sd, los))
    return lines


class PlackettLuceBoard(Outcomes):
    """The leaderboard of the fool-choice Plackett-Luce fit (``pl_fit``'s model) over the
    ladder's distinct outcomes; its spread is the inverse curvature, or, with the rotations
    linked, the tables' cluster-robust (sandwich) variance, as ``fit_ratings`` does. No
    bootstrap: ``bootstraps`` is ignored."""

    def fit(self, anchor_player: int, bootstraps: int) -> list[Line]:
        decided = [i for i, loser in enumerate(self.losers) if loser is not None]
        players = sorted({p for table in self.tables for p in table})
        index = {p: k for k, p in enumerate(players)}
        seats = np.array([[index[p] for p in self.tables[i]] for i in decided])
        losers = np.array([self.losers[i] for i in decided])
        weight = np.array([self.counts[i] for i in decided], dtype=float)
        units = np.array([self.groups[i] for i in decided])
        size = len(players)
        met = np.zeros((size, size))
        for table in self.tables:
            for a, b in itertools.combinations(table, 2):
                met[index[a], index[b]] = met[index[b], index[a]] = 1.0
        prior = 2.0 * met + CONNECTING_DRAWS
        np.fill_diagonal(prior, 0.0)
        fixed = index.get(anchor_player, 0)
        keep = [k for k in range(size) if k != fixed]
        theta = np.zeros(size)
        rows = np.arange(len(seats))
        for _ in range(100):
            gradient, hessian, scores, p = _pl_terms(theta, seats, losers, weight, prior, rows)
            step = np.linalg.solve(hessian[np.ix_(keep, keep)], -gradient[keep])
            step = clip_step(step, unit=ELO_PER_NATURAL_UNIT)
            theta[keep] += step
            if np.abs(step).max() < 1e-9:
                break
        gradient, hessian, scores, p = _pl_terms(theta, seats, losers, weight, prior, rows)
        bread = np.linalg.inv(-hessian[np.ix_(keep, keep)])
        if self.linked and len(seats):
            # Each unit's score: the sum over its deals of d log P(deal) / d theta.
            per_unit = np.zeros((int(units.max()) + 1, size))
            np.add.at(per_unit, units, scores)
            unit_weight = np.zeros(len(per_unit))
            np.add.at(unit_weight, units, weight)
            # A unit's rows share their count; each row carries it, so divide it back out.
            times = np.zeros(len(per_unit))
            np.add.at(times, units, 1.0)
            unit_count = np.where(times > 0, unit_weight / np.maximum(times, 1.0), 0.0)
            meat = (per_unit[:, keep] * unit_count[:, None]).T @ per_unit[:, keep]
            inner = bread @ meat @ bread
        else:
            inner = bread
        covariance = np.zeros((size, size))
        covariance[np.ix_(keep, keep)] = inner * ELO_PER_NATURAL_UNIT**2
        ratings = {
            p: 1000.0 + (theta[index[p]] - theta[fixed]) * ELO_PER_NATURAL_UNIT for p in players
        }
        return _lines(ratings, lambda a, b: covariance[index[a], index[b]])


def _pl_terms(theta, seats, losers, weight, prior, rows):
    """Return the gradient and Hessian of the PL log-likelihood with its prior, and each
    deal's score (unweighted)."""
    size = len(theta)
    badness = np.exp(-theta[seats]) if len(seats) else np.zeros((0, 1))
    p = badness / badness.sum(axis=1, keepdims=True) if len(seats) else badness
    scores = np.zeros((len(seats), size))
    if len(seats):
        np.add.at(scores, (rows, seats[rows, losers]), -1.0)
        np.add.at(scores, (np.repeat(rows, seats.shape[1]), seats.ravel()), p.ravel())
    gradient = (scores * weight[:, None]).sum(axis=0)
    hessian = np.zeros((size, size))
    for a in range(seats.shape[1] if len(seats) else 0):
        for b in range(seats.shape[1]):
            value = weight * p[:, a] * ((a == b) - p[:, b])
            np.add.at(hessian, (seats[:, a], seats[:, b]), -value)
    d = theta[:, None] - theta[None, :]
    q = 1.0 / (1.0 + np.exp(-d))
    gradient += (prior * (0.5 - q)).sum(axis=1)
    curvature = prior * q * (1.0 - q)
    hessian -= np.diag(curvature.sum(axis=1)) - curvature
    return gradient, hessian, scores, p


class OpenSkillBoard:
    """openskill's Plackett-Luce as the live leaderboard: updated deal by deal (ranks: the
    fool 1, the others 0), intervals ``mu +- 1.96 sigma`` and the likelihood of
    superiority from the two sigmas (the model keeps no covariance), on its own scale."""

    def __init__(self, linked: bool) -> None:
        from openskill.models import PlackettLuce

        self.model = PlackettLuce()
        self.ratings: dict[int, object] = {}
        self.deals = 0

    def add(self, deals: list[tuple[tuple[int, ...], int | None]]) -> None:
        for seats, loser in deals:
            self.deals += 1
            if loser is None:
                continue
            for p in seats:
                self.ratings.setdefault(p, self.model.rating())
            teams = [[self.ratings[p]] for p in seats]
            ranks = [1 if s == loser else 0 for s in range(len(seats))]
            for p, (rated,) in zip(seats, self.model.rate(teams, ranks=ranks), strict=True):
                self.ratings[p] = rated

    def fit(self, anchor_player: int, bootstraps: int) -> list[Line]:
        mu = {p: r.mu for p, r in self.ratings.items()}
        sigma = {p: r.sigma for p, r in self.ratings.items()}
        return _lines(mu, lambda a, b: sigma[a] ** 2 if a == b else 0.0)


LEADERBOARDS = {"pl": PlackettLuceBoard, "openskill": OpenSkillBoard}
MODELS = ("bt", "pl", "openskill")


def confident_order(
    shapes: list[str], models: list[str], runs: int, first_seed: int, processes: int
) -> list[dict]:
    """Return, per shape and model, the games the ladder (policy ``after``) needs to a
    confident order with that model as its leaderboard: median, quartiles, wrong share."""
    banks, truths = {}, {}
    for shape in shapes:
        path = bank_path(shape, DECKS[shape])
        banks[shape] = str(path)
        tables, losers, groups = bank_results(shape, np.load(path))
        entries = fit_ratings(tables, losers, anchor=anchor(shape), anchor_rating=1000.0,
                              bootstraps=0, groups=groups)  # fmt: skip
        truths[shape] = tuple(e.player for e in entries)
    # Each task hands simulate its model's leaderboard class (None: Bradley-Terry's own),
    # so that benchmarks.ladder_power needs no import of this module.
    runs_of = [
        (model, (shape, "after", seed, 20000, 200, truths[shape], LEADERBOARDS.get(model)))
        for shape in shapes
        for model in models
        for seed in range(first_seed, first_seed + runs)
    ]
    with multiprocessing.Pool(processes, _init, (banks,)) as pool:
        outcomes = pool.map(simulate, [task for _, task in runs_of], chunksize=1)
    figures = []
    for shape in shapes:
        for model in models:
            done = [o for (m, t), o in zip(runs_of, outcomes, strict=True)
                    if (t[0], m) == (shape, model)]  # fmt: skip
            figures.append({"shape": shape, "model": model} | summary(done))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--train", default="500,2000,all")
    parser.add_argument("--runs", type=int, default=50, help="simulated ladders per model")
    parser.add_argument("--models", default=",".join(MODELS), help="for games to an order")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first run")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    shapes = options.shapes.split(",")
    losses = []
    print("| shape | training deals | bt | pl | openskill | coin |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shape in shapes:
        decks = DECKS[shape]
        path = bank_path(shape, decks)
        if not path.exists():
            raise SystemExit(f"no bank for {shape}: run python -m benchmarks.ladder_power first")
        bank = np.load(path)
        pool = deals_of(shape, bank, range(decks // 2))
        test = deals_of(shape, bank, range(decks // 2, decks))
        for size in options.train.split(","):
            train = pool if size == "all" else random.Random(size).sample(pool, int(size))
            row = {
                "shape": shape, "train": len(train),
                "bt": log_loss(bt_predictor(shape, train), test),
                "pl": log_loss(pl_predictor(shape, train), test),
                "openskill": log_loss(openskill_predictor(shape, train, 0), test),
                "coin": math.log(parse_shape(shape)[1]),
            }  # fmt: skip
            losses.append(row)
            print(f"| {shape} | {row['train']} | {row['bt']:.4f} | {row['pl']:.4f} | "
                  f"{row['openskill']:.4f} | {row['coin']:.4f} |", flush=True)  # fmt: skip
    orders = []
    if options.runs:
        models = options.models.split(",")
        orders = confident_order(
            shapes, models, options.runs, options.first_seed, options.processes
        )
        print(f"\nGames to a confident order, the ladder's pairing and duplicate tables with "
              f"each model as its leaderboard ({options.runs} runs from seed "
              f"{options.first_seed}):\n")  # fmt: skip
        print("| shape | model | median games | quartiles | wrong confident | capped |")
        print("| --- | --- | --- | --- | --- | --- |")
        for f in orders:
            print(f"| {f['shape']} | {f['model']} | {f['median']:.0f} | {f['q1']:.0f}-"
                  f"{f['q3']:.0f} | {f['wrong']:.0%} | {f['capped']} |")  # fmt: skip
    harness.write_json(options.json, {"log_loss": losses, "confident_order": orders})


if __name__ == "__main__":
    main()
