"""How many games the ladder needs before its leaderboard shows the true order.

    python -m benchmarks.ladder_power [--shapes durak-2p,volynshchik-3p] [--runs 50]
        [--policies before,after] [--decks 400] [--processes 2] [--json out.json]

An arena of bots of known, graded strength: the built-in `greedy` player mixing in a
random move with probability 0, 10%, ... 100% (``EPSILONS``; at 100% it is `random`,
the anchor). For each shape the bots' games are played once into a bank (every table
of the shape, ``--decks`` decks, each deck in every seat rotation; cached under
``var/ladder_power/``), and each simulated ladder draws its deals from the bank. The
ladder's own code chooses the tables (``tournaments.pairing``) and fits the ratings
(``cardkit.stats.bradley_terry.fit_ratings``, anchored on `random`).

A run stops when the fit's order is confident: every adjacent pair separated with a
likelihood of superiority of at least 95%, checked after every table for the first
100 games and every 3% of games later (a cheap fit without bootstrap screens; a fit with
``--bootstraps`` resamples, as the live fit, confirms). The figures, per shape and
policy over ``--runs`` seeded runs: the median games to a confident order (with the
quartiles), and the share of runs whose confident order was wrong. A run that reaches
``--max-games`` without a confident order counts at the cap.

The policies:

- ``before``: the ladder as it was: the fewest-games bot and the closest-rated others,
  one deal per table on a random deck in a random seat rotation, deals fitted alone;
- ``dup``: the same pairing, each table a duplicate (one deck in every rotation), the
  rotations fitted as independent deals;
- ``dup-linked``: as ``dup``, the rotations linked in the fit (``groups``);
- ``info``: pairing by information (``informative_table``), one deal per table;
- ``after``: pairing by information, duplicate tables, rotations linked: the ladder;
- ``after-intervals``: as ``after``, the pairing told the two intervals only and not
  the fit's likelihood of superiority between neighbours (the ladder until the pairing
  read it: see ``tournaments.pairing``).

Same seeds for every policy: run ``i`` of every policy uses seed ``--first-seed + i``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from cardkit.engine import load_game
from cardkit.players import decision_rng
from cardkit.players.greedy import greedy_choice
from cardkit.stats.bradley_terry import fit_ratings
from tournaments.pairing import Candidate, closest_table, informative_table

BASE_DIR = Path(__file__).resolve().parent.parent
# The share of random moves of each bot, best bot first: spaced so that the rating steps
# are even (Volynshchik's greedy play is only about 230 Elo above random, flat at the top).
EPSILONS = {
    "durak": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.8, 1.0),
    "volynshchik": (0.0, 0.25, 0.45, 0.6, 0.72, 0.84, 0.93, 1.0),
}
# Bank decks per table, by shape (each played in every rotation): about 50,000 deals.
DECKS = {"durak-2p": 800, "durak-3p": 200, "durak-4p": 100, "volynshchik-3p": 300,
         "volynshchik-4p": 150}  # fmt: skip
SHAPES = ("durak-2p", "durak-3p", "durak-4p", "volynshchik-3p", "volynshchik-4p")
POLICIES = {
    # name: (pairing, duplicate, linked, the pairing told the fit's LOS)
    "before": ("closest", False, False, False),
    "dup": ("closest", True, False, False),
    "dup-linked": ("closest", True, True, False),
    "info": ("informative", False, False, True),
    "after": ("informative", True, True, True),
    "after-intervals": ("informative", True, True, False),
}


def epsilons(shape: str) -> tuple[float, ...]:
    return EPSILONS[parse_shape(shape)[0]]


def anchor(shape: str) -> int:
    return len(epsilons(shape)) - 1  # the random player
LOS = 0.95


def parse_shape(shape: str) -> tuple[str, int]:
    game, players = shape.rsplit("-", 1)
    return game, int(players.removesuffix("p"))


# --- The bank of deals -------------------------------------------------------------------


def _choose(epsilon: float, view: dict, moves: list[dict], rng: random.Random) -> dict:
    if len(moves) == 1:
        return moves[0]
    if rng.random() < epsilon:
        return rng.choice(moves)
    return greedy_choice(view, moves, rng)


def play_table(task: tuple[str, tuple[int, ...], int, int]) -> np.ndarray:
    """Play decks ``start`` to ``stop`` in every rotation of a table; return the losers.

    ``result[d, r]``: the position in ``table`` of the loser of deck ``start + d`` dealt
    with seat ``s`` held by ``table[(s + r) % n]``; -1 for a drawn deal.
    """
    shape, table, start, stop = task
    game_name, players = parse_shape(shape)
    game = load_game(game_name, players=players, deck_size=36 if game_name == "durak" else 32)
    strength = epsilons(shape)
    result = np.empty((stop - start, players), dtype=np.int8)
    for d in range(start, stop):
        for r in range(players):
            seating = [table[(s + r) % players] for s in range(players)]
            state = game.deal(seed=f"ladder-power:{shape}:{d}", dealer=0)
            match_seed = f"ladder-power:{shape}:{table}:{d}:{r}"
            while not state.is_over:
                seat = state.to_move
                rng = decision_rng(match_seed, seat, state.ply)
                moves = state.legal_moves()
                move = _choose(strength[seating[seat]], state.view(seat), moves, rng)
                state = state.play(move)
            loser = state.result["loser"]
            result[d - start, r] = -1 if loser is None else (loser + r) % players
    return result


def bank_path(shape: str, decks: int) -> Path:
    digest = hashlib.sha256(repr((epsilons(shape), decks, 1)).encode()).hexdigest()[:10]
    return BASE_DIR / "var" / "ladder_power" / f"{shape}-{decks}-{digest}.npy"


def load_bank(shape: str, decks: int, processes: int) -> np.ndarray:
    """Return the bank of a shape, ``bank[table, deck, rotation]``, playing it if needed."""
    path = bank_path(shape, decks)
    if path.exists():
        return np.load(path)
    _, players = parse_shape(shape)
    tables = list(itertools.combinations(range(len(epsilons(shape))), players))
    step = 25
    tasks = [
        (shape, table, start, min(decks, start + step))
        for table in tables
        for start in range(0, decks, step)
    ]
    started = time.perf_counter()
    with multiprocessing.Pool(processes) as pool:
        chunks = pool.map(play_table, tasks, chunksize=4)
    bank = np.stack(
        [np.concatenate(chunks[i : i + math.ceil(decks / step)]) for i in
         range(0, len(chunks), math.ceil(decks / step))]
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, bank)
    print(f"{shape}: played {bank.size} deals in {time.perf_counter() - started:.0f} s",
          flush=True)  # fmt: skip
    return bank


def bank_results(shape: str, bank: np.ndarray) -> tuple[list, list, list]:
    """Return every deal of the bank as (tables, losers, groups) for ``fit_ratings``."""
    _, players = parse_shape(shape)
    combos = list(itertools.combinations(range(len(epsilons(shape))), players))
    tables, losers, groups = [], [], []
    for t, table in enumerate(combos):
        for d in range(bank.shape[1]):
            for r in range(players):
                tables.append([table[(s + r) % players] for s in range(players)])
                loser = int(bank[t, d, r])
                losers.append(None if loser < 0 else (loser - r) % players)
                groups.append((t, d))
    return tables, losers, groups


# --- One simulated ladder ----------------------------------------------------------------

_BANK: dict[str, np.ndarray] = {}


def _init(banks: dict[str, str]) -> None:
    for shape, path in banks.items():
        _BANK[shape] = np.load(path)


def simulate(task: tuple) -> dict:
    """Run one seeded ladder until its order is confident; return games and verdict.

    ``task``: (shape, policy, seed, max games, bootstraps, true order[, leaderboard]);
    the leaderboard is a class called with ``linked`` and fed the deals as ``Outcomes``
    is (another rating model's, handed in by ``benchmarks.rating_models``), else
    ``Outcomes``, whose fit is ``fit_ratings`` (Bradley-Terry).

    The results are kept as distinct outcomes with counts (``fit_ratings(counts=...)``),
    so that a fit costs the same after 100 games or 20,000.
    """
    shape, policy, seed, max_games, bootstraps, truth, *board = task
    pairing, duplicate, linked, told_los = POLICIES[policy]
    bank = _BANK[shape]
    _, players = parse_shape(shape)
    size = len(epsilons(shape))
    combos = {c: t for t, c in enumerate(itertools.combinations(range(size), players))}
    rng = random.Random(seed)
    draw = random.Random(f"deals:{seed}")
    results = (board[0] if board and board[0] is not None else Outcomes)(linked)
    games = dict.fromkeys(range(size), 0)
    fitted: dict[int, dict] = {}
    next_check = 0
    while results.deals < max_games:
        candidates = [
            Candidate(key=b, owner=b, builtin=False, games=games[b], **fitted[b])
            if b in fitted else
            Candidate(key=b, owner=b, builtin=False, games=games[b], rating=1500.0)
            for b in games
        ]  # fmt: skip
        if pairing == "closest":
            table = closest_table(candidates, players)
        else:
            table = informative_table(candidates, players, rng)
        key = tuple(sorted(c.key for c in table))
        deck = draw.randrange(bank.shape[1])
        rotations = range(players) if duplicate else [draw.randrange(players)]
        deals = []
        for r in rotations:
            loser = int(bank[combos[key], deck, r])
            deals.append((tuple(key[(s + r) % players] for s in range(players)),
                          None if loser < 0 else (loser - r) % players))  # fmt: skip
            for b in key:
                games[b] += 1
        results.add(deals)
        if results.deals < next_check:
            continue
        next_check = math.ceil(results.deals * 1.03) if results.deals > 100 else 0
        entries = results.fit(anchor(shape), 0)
        fitted = {
            e.player: {"rating": e.rating, "low": e.low, "high": e.high}
            | ({"los": e.los, "below": below and below.player} if told_los else {})
            for e, below in itertools.zip_longest(entries, entries[1:])
        }
        if _confident(entries) and len(entries) == size:
            entries = results.fit(anchor(shape), bootstraps)
            if _confident(entries):
                order = tuple(e.player for e in entries)
                verdict = "right" if order == truth else "wrong"
                return {"games": results.deals, "verdict": verdict}
    return {"games": results.deals, "verdict": "cap"}


class Outcomes:
    """The distinct results of a simulated ladder, counted, in ``fit_ratings``'s terms."""

    def __init__(self, linked: bool) -> None:
        self.linked = linked
        self.deals = 0
        self.tables: list[tuple[int, ...]] = []
        self.losers: list[int | None] = []
        self.groups: list[int] = []
        self.counts: list[int] = []
        self._seen: dict[tuple, list[int]] = {}

    def add(self, deals: list[tuple[tuple[int, ...], int | None]]) -> None:
        self.deals += len(deals)
        units = [tuple(deals)] if self.linked else [(deal,) for deal in deals]
        for unit in units:
            rows = self._seen.get(unit)
            if rows is None:
                rows = self._seen[unit] = []
                for table, loser in unit:
                    rows.append(len(self.tables))
                    self.tables.append(table)
                    self.losers.append(loser)
                    self.groups.append(len(self._seen))
                    self.counts.append(0)
            for row in rows:
                self.counts[row] += 1

    def fit(self, anchor_player: int, bootstraps: int):
        return fit_ratings(
            self.tables, self.losers, anchor=anchor_player, anchor_rating=1000.0,
            bootstraps=bootstraps, seed=self.deals, counts=self.counts,
            groups=self.groups if self.linked else None,
        )  # fmt: skip


def summary(runs: list[dict]) -> dict:
    """Return the figures of some runs: median games and quartiles, the share of wrong
    confident orders, the runs capped."""
    counts = sorted(r["games"] for r in runs)
    quartiles = statistics.quantiles(counts, n=4) if len(counts) > 1 else counts * 3
    return {
        "runs": len(runs), "median": statistics.median(counts), "q1": quartiles[0],
        "q3": quartiles[2], "wrong": sum(r["verdict"] == "wrong" for r in runs) / len(runs),
        "capped": sum(r["verdict"] == "cap" for r in runs),
    }  # fmt: skip


def _confident(entries) -> bool:
    return all(e.los is None or e.los >= LOS for e in entries)


# --- The command ---------------------------------------------------------------------------


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (no figures come from zero runs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too few: give 1 or more")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--runs", type=positive, default=50)
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first run")
    parser.add_argument("--decks", type=positive, help="bank decks per table (default: DECKS)")
    parser.add_argument("--max-games", type=positive, default=20000)
    parser.add_argument("--bootstraps", type=int, default=200)
    parser.add_argument("--processes", type=positive, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    shapes = options.shapes.split(",")
    policies = options.policies.split(",")
    for name in policies:
        if name not in POLICIES:
            sys.exit(f"unknown policy {name!r}; the policies are {', '.join(POLICIES)}")

    banks, truths = {}, {}
    for shape in shapes:
        decks = options.decks or DECKS[shape]
        bank = load_bank(shape, decks, options.processes)
        banks[shape] = str(bank_path(shape, decks))
        tables, losers, groups = bank_results(shape, bank)
        entries = fit_ratings(tables, losers, anchor=anchor(shape), anchor_rating=1000.0,
                              bootstraps=0, groups=groups)  # fmt: skip
        truths[shape] = tuple(e.player for e in entries)
        designed = tuple(range(len(epsilons(shape))))
        print(f"{shape}: bank of {bank.size} deals; "
              + ", ".join(f"e{epsilons(shape)[e.player]:.2f}={e.rating:.0f}" for e in entries)
              + f"; least LOS {min(e.los for e in entries[:-1]):.4f}"
              + ("" if truths[shape] == designed else "  (bank order differs from design)"),
              flush=True)  # fmt: skip

    tasks = [
        (shape, policy, seed, options.max_games, options.bootstraps, truths[shape])
        for shape in shapes
        for policy in policies
        for seed in range(options.first_seed, options.first_seed + options.runs)
    ]
    started = time.perf_counter()
    with multiprocessing.Pool(options.processes, _init, (banks,)) as pool:
        outcomes = pool.map(simulate, tasks, chunksize=1)
    figures = []
    for shape in shapes:
        for policy in policies:
            runs = [o for t, o in zip(tasks, outcomes, strict=True) if t[:2] == (shape, policy)]
            figures.append({"shape": shape, "policy": policy} | summary(runs))
    print(f"\n{len(tasks)} runs in {time.perf_counter() - started:.0f} s; "
          f"load {os.getloadavg()[0]:.2f}\n")  # fmt: skip
    print("| shape | policy | runs | median games | quartiles | wrong confident | capped |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for f in figures:
        print(f"| {f['shape']} | {f['policy']} | {f['runs']} | {f['median']:.0f} | "
              f"{f['q1']:.0f}-{f['q3']:.0f} | {f['wrong']:.0%} | {f['capped']} |")  # fmt: skip
    if options.json:
        runs = [{"shape": t[0], "policy": t[1], "seed": t[2], **o}
                for t, o in zip(tasks, outcomes, strict=True)]  # fmt: skip
        harness.write_json(options.json, {"figures": figures, "runs": runs})


if __name__ == "__main__":
    main()
