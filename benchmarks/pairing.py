"""Games to a decision on paired deals against the same test on unpaired games.

    python -m benchmarks.pairing [--decks 400] [--strong-decks 120] [--runs 400]
                                 [--processes 2] [--json out.json]

For each pair of built-in players (candidate, baseline): ``strong`` vs ``greedy``,
``greedy`` vs ``sloppy`` (greedy with 10% random moves), ``greedy`` vs ``greedy``; and
each shape: 2-player Durak (``head_to_head``: each deck twice, seats swapped), 3-player
Durak and 3-player Volynshchik (``reference``: each deck and seat once with the
candidate and once with the baseline, the other seats ``greedy``). It plays ``--decks``
decks (``--strong-decks`` where ``strong`` plays, which is slow) through the engine.

From those games it takes two pentanomial distributions of pair outcomes:

- paired: the pairs as played (the two games share the deck);
- unpaired: the same games' scores recombined as if each game of a pair had its own
  random deck (the product of the two games' score distributions; seats alternate,
  as in the paired test), which is what an unpaired test of the same games would see.

It then runs ``--runs`` sequential tests (``cardkit.stats.sprt.simulate``, LLR after every
pair, the default bounds nElo [0, 20] and, for comparison, logistic Elo [0, 20],
alpha = beta = 0.05) drawing pairs from each distribution, and prints the mean games to
a decision, paired and unpaired, and their ratio. The tests resample the played pairs
(a bootstrap), so the figures carry the sampling error of ``--decks`` decks.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from cardkit.engine import load_game
from cardkit.players import decision_rng, get_player
from cardkit.stats import sprt

# strong last: it is slow, and the figures of each case are written as soon as it ends.
PAIRS = [("greedy", "sloppy"), ("greedy", "greedy"), ("strong", "greedy")]
SHAPES = [("durak", 2), ("durak", 3), ("volynshchik", 3)]
REFERENCE = "greedy"
TESTS = [("normalized", 0.0, 20.0), ("logistic", 0.0, 20.0)]


def play(game_name: str, players: int, seating: list[str], deck_seed: str, match_seed: str):
    game = load_game(game_name, players=players)
    brains = {name: get_player(name, game_name) for name in set(seating)}
    state = game.deal(seed=deck_seed, dealer=0)
    while not state.is_over:
        seat = state.to_move
        moves = state.legal_moves()
        move = brains[seating[seat]].choose(
            state.view(seat), moves, decision_rng(match_seed, seat, state.ply)
        )
        state = state.play(move)
    return state.result["loser"]


def play_deck(task: tuple[str, int, str, str, int]) -> list[tuple[float, float]]:
    """Play one deck's pairs; return (first game's score, second game's score) per pair,
    each from the point of view that ``sprt.pair_outcome`` takes."""
    game_name, players, candidate, baseline, index = task
    deck = f"bench-pairing:{game_name}:{players}:{index}"
    tag = f"{deck}:{candidate}:{baseline}"
    pairs = []
    if players == 2:
        first = play(game_name, 2, [candidate, baseline], deck, f"{tag}:0")
        second = play(game_name, 2, [baseline, candidate], deck, f"{tag}:1")
        pairs.append((sprt.game_score(first, 0), 1 - sprt.game_score(second, 1)))
    else:
        for seat in range(players):
            seating = [REFERENCE] * players
            seating[seat] = candidate
            c = play(game_name, players, seating, deck, f"{tag}:{seat}:c")
            seating[seat] = baseline
            b = play(game_name, players, seating, deck, f"{tag}:{seat}:b")
            pairs.append((sprt.game_score(c, seat), sprt.game_score(b, seat)))
    return pairs


def play_unpaired(task: tuple[str, int, str, str, int]) -> tuple[float, float]:
    """Play pair ``index`` of an unpaired test: its two games on two different decks, the
    tested seat alternating with the pair's index as in the paired test."""
    game_name, players, candidate, baseline, index = task
    tag = f"bench-unpaired:{game_name}:{players}:{candidate}:{baseline}:{index}"
    if players == 2:
        first = play(game_name, 2, [candidate, baseline], f"{tag}:deck-a", f"{tag}:0")
        second = play(game_name, 2, [baseline, candidate], f"{tag}:deck-b", f"{tag}:1")
        return sprt.game_score(first, 0), 1 - sprt.game_score(second, 1)
    seat = index % players
    seating = [REFERENCE] * players
    seating[seat] = candidate
    c = play(game_name, players, seating, f"{tag}:deck-a", f"{tag}:c")
    seating[seat] = baseline
    b = play(game_name, players, seating, f"{tag}:deck-b", f"{tag}:b")
    return sprt.game_score(c, seat), sprt.game_score(b, seat)


def play_paired(task: tuple[str, int, str, str, int]) -> tuple[float, float]:
    """Play pair ``index`` of a paired test on a deck of its own."""
    game_name, players, candidate, baseline, index = task
    pairs = play_deck((game_name, players, candidate, baseline, 10**6 + index // players))
    return pairs[0] if players == 2 else pairs[index % players]


def direct_tests(pool, case: tuple[str, int, str, str], paired: bool, runs: int,
                 batch: int = 8) -> dict:
    """Run ``runs`` sequential tests (default bounds) on games played for them, not
    resampled: each run plays its own decks, ``batch`` pairs at a time, and stops at the
    first pair whose LLR crosses a bound (the rest of its batch is not counted)."""
    game_name, players, candidate, baseline = case
    low, high = sprt.llr_bounds(0.05, 0.05)
    counts = {run: np.zeros(5) for run in range(runs)}
    played = dict.fromkeys(range(runs), 0)
    lengths, accepted = {}, 0
    job = play_paired if paired else play_unpaired
    while counts:
        tasks = [
            (game_name, players, candidate, baseline, run * 100_000 + played[run] + k)
            for run in counts for k in range(batch)
        ]
        outcomes = pool.map(job, tasks, chunksize=4)
        for n, run in enumerate(list(counts)):
            for a, b in outcomes[n * batch:(n + 1) * batch]:
                counts[run][sprt.pair_outcome(a, b)] += 1
                played[run] += 1
                value = sprt.llr(counts[run], 0.0, 20.0)
                if value <= low or value >= high or played[run] >= 20_000:
                    lengths[run] = played[run]
                    accepted += value >= high
                    del counts[run]
                    break
    games = [2 * n for n in lengths.values()]
    return {"runs": runs, "games_mean": float(np.mean(games)),
            "games_median": float(np.median(games)), "accepted_h1": accepted / runs}


def distributions(pairs: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    paired = np.zeros(5)
    for a, b in pairs:
        paired[sprt.pair_outcome(a, b)] += 1
    scores = np.array([0.0, 0.5, 1.0])
    first = np.array([sum(1 for a, _ in pairs if a == s) for s in scores], dtype=float)
    second = np.array([sum(1 for _, b in pairs if b == s) for s in scores], dtype=float)
    first, second = first / first.sum(), second / second.sum()
    unpaired = np.zeros(5)
    for i, a in enumerate(scores):
        for j, b in enumerate(scores):
            unpaired[sprt.pair_outcome(a, b)] += first[i] * second[j]
    return paired / paired.sum(), unpaired


def _selected(only: str, candidate: str, baseline: str, game: str, players: int) -> bool:
    if not only:
        return True
    for case in only.split(","):
        pair, _, shape = case.partition(":")
        if pair == f"{candidate}-{baseline}" and shape in ("", f"{game}-{players}p"):
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decks", type=int, default=400)
    parser.add_argument("--strong-decks", type=int, default=120)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--only", default="", help="cases to run, e.g. strong-greedy:durak-3p,greedy-sloppy "
        "(candidate-baseline, optionally :game-Np); all by default",
    )
    parser.add_argument(
        "--direct", type=int, default=0, metavar="RUNS",
        help="only run RUNS tests of greedy against sloppy in 2-player Durak on games "
        "played for each test (paired and unpaired), as a check of the resampled figures",
    )
    options = parser.parse_args()
    if options.direct:
        with multiprocessing.Pool(options.processes) as pool:
            case = ("durak", 2, "greedy", "sloppy")
            result = {
                name: direct_tests(pool, case, paired, options.direct)
                for name, paired in (("paired", True), ("unpaired", False))
            }
        result["ratio"] = result["unpaired"]["games_mean"] / result["paired"]["games_mean"]
        print(json.dumps(result, indent=1))
        harness.write_json(options.json, result, indent=1)
        return
    rows = []
    print(f"load at start {os.getloadavg()[0]:.2f}; {options.runs} tests a case")
    with multiprocessing.Pool(options.processes) as pool:
        for candidate, baseline in PAIRS:
            decks = options.strong_decks if "strong" in (candidate, baseline) else options.decks
            for game_name, players in SHAPES:
                if not _selected(options.only, candidate, baseline, game_name, players):
                    continue
                started = time.perf_counter()
                tasks = [(game_name, players, candidate, baseline, i) for i in range(decks)]
                pairs = [p for out in pool.imap(play_deck, tasks, chunksize=2) for p in out]
                paired, unpaired = distributions(pairs)
                row = {
                    "candidate": candidate, "baseline": baseline, "game": game_name,
                    "players": players, "decks": decks, "pairs": len(pairs),
                    "paired_pdf": paired.round(4).tolist(),
                    "unpaired_pdf": unpaired.round(4).tolist(),
                    "play_seconds": round(time.perf_counter() - started, 1),
                    "tests": [],
                }
                print(f"\n{candidate} vs {baseline}, {game_name} {players}p: {len(pairs)} pairs "
                      f"from {decks} decks in {row['play_seconds']} s")
                print(f"  paired   {np.round(paired, 3)}  estimate {sprt.estimate(paired * 1e4)}")
                print(f"  unpaired {np.round(unpaired, 3)}")
                for model, elo0, elo1 in TESTS:
                    results = {}
                    for name, pdf in (("paired", paired), ("unpaired", unpaired)):
                        sim = sprt.simulate(
                            pdf, elo0, elo1, 0.05, 0.05, runs=options.runs,
                            max_pairs=100_000, model=model, seed=7,
                        )
                        results[name] = {
                            "games_mean": 2 * sim.mean_pairs,
                            "games_median": 2 * sim.median_pairs,
                            "accepted_h1": sim.accepted_h1 / options.runs,
                            "undecided": sim.undecided,
                        }
                    ratio = results["unpaired"]["games_mean"] / results["paired"]["games_mean"]
                    row["tests"].append({"model": model, "elo0": elo0, "elo1": elo1,
                                         "ratio": ratio, **results})
                    print(f"  {model:<10} [{elo0:g}, {elo1:g}]: games to a decision paired "
                          f"{results['paired']['games_mean']:.0f} (H1 "
                          f"{results['paired']['accepted_h1']:.0%}), unpaired "
                          f"{results['unpaired']['games_mean']:.0f} (H1 "
                          f"{results['unpaired']['accepted_h1']:.0%}): unpaired / paired "
                          f"{ratio:.2f}")
                rows.append(row)
                harness.write_json(options.json, {"rows": rows}, indent=1)
    print(f"\nload at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
