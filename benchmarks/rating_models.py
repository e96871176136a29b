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
import json
import math
import random
from pathlib import Path

import numpy as np

from benchmarks.ladder_power import DECKS, anchor, bank_path, epsilons, parse_shape
from tournaments.bradley_terry import ELO_PER_NATURAL_UNIT, fit_ratings

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
        step = np.clip(step, -2.0, 2.0)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--train", default="500,2000,all")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    figures = []
    print("| shape | training deals | bt | pl | openskill | coin |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shape in options.shapes.split(","):
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
            figures.append(row)
            print(f"| {shape} | {row['train']} | {row['bt']:.4f} | {row['pl']:.4f} | "
                  f"{row['openskill']:.4f} | {row['coin']:.4f} |", flush=True)  # fmt: skip
    if options.json:
        options.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
