"""\"Is the candidate better?\" on the author's machine: the server's sequential test, played
with the local arena.

    cardkit sprt --candidate mybot_v2.py:choose --baseline mybot_v1.py:choose

Pairs are made as the server's sequential tests make them (docs/sequential-tests.md):

- ``head_to_head`` (2 players): pair ``i`` is deck ``i`` played twice, the candidate in
  seat 0 and then in seat 1; the outcome is the candidate's points over the two games.
- ``reference`` (3 players or more): pair ``i`` is deck ``i // n`` and seat ``i % n``,
  played once with the candidate in that seat and once with the baseline, the other seats
  held by the reference player; the outcome is ``c + (1 - b)``.

After every pair the counts of the five outcomes give the LLR
(``cardkit.stats.sprt.llr``, the statistic the server's tests use), and the test stops
when it crosses one of Wald's bounds or when ``max_pairs`` pairs are played.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cardkit.arena import Deal, deal_seed, play_deal
from cardkit.engine import load_game
from cardkit.protocol import DEFAULT_TIME_LIMIT
from cardkit.specs import Player
from cardkit.stats import sprt


@dataclass(frozen=True)
class SprtBounds:
    """The hypotheses (Elo on ``model``'s scale) and the error rates of a test."""

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def __post_init__(self) -> None:
        if self.model not in sprt.MODELS:
            raise ValueError(f"unknown Elo model {self.model!r}: one of {', '.join(sprt.MODELS)}")
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be above elo0 ({self.elo0})")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name} must lie between 0 and 0.5 (an error rate)")

    @property
    def llr_bounds(self) -> tuple[float, float]:
        return sprt.llr_bounds(self.alpha, self.beta)


@dataclass
class SprtState:
    """The test after ``pairs`` pairs: the five counts, the LLR and the decision so far."""

    bounds: SprtBounds
    counts: list[int] = field(default_factory=lambda: [0] * 5)
    llr: float = 0.0
    decision: str = ""  # "H0", "H1", or "" while undecided
    faults: int = 0  # deals ended by a bot's fault (a forfeit, as on the arena)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def record(self, outcome: int) -> None:
        self.counts[outcome] += 1
        self.llr = float(sprt.llr(self.counts, self.bounds.elo0, self.bounds.elo1,
                                  model=self.bounds.model))
        self.decision = sprt.decision(self.llr, self.bounds.alpha, self.bounds.beta)

    def estimate(self) -> sprt.Estimate:
        return sprt.estimate(self.counts)


def pair_deals(
    game: str, options: dict[str, Any], candidate: Player, baseline: Player,
    reference: Player | None, *, pair: int, seed: str, time_limit: float,
) -> tuple[int, Deal, Deal]:
    """Play pair number ``pair``; return its outcome (0 .. 4) and its two deals."""
    seats = load_game(game, **options).players
    players = [candidate, baseline] if reference is None else [candidate, baseline, reference]
    if reference is None:
        deck, first_seating, second_seating = pair, (0, 1), (1, 0)
    else:
        deck, seat = divmod(pair, seats)
        first_seating = tuple(0 if index == seat else 2 for index in range(seats))
        second_seating = tuple(1 if index == seat else 2 for index in range(seats))
    deck_seed = deal_seed(seed, deck)
    first, second = (
        play_deal(game, options, players, seating=seating, seed=deck_seed, dealer=0,
                  number=2 * pair + which + 1, time_limit=time_limit)
        for which, seating in enumerate((first_seating, second_seating))
    )  # fmt: skip
    if reference is None:
        outcome = sprt.pair_outcome(
            sprt.game_score(first.result.get("loser"), 0),
            1.0 - sprt.game_score(second.result.get("loser"), 1),
        )
    else:
        outcome = sprt.pair_outcome(
            sprt.game_score(first.result.get("loser"), seat),
            sprt.game_score(second.result.get("loser"), seat),
        )
    return outcome, first, second


def sprt_run(
    game: str, options: dict[str, Any], candidate: Player, baseline: Player, *,
    bounds: SprtBounds, max_pairs: int, reference: Player | None = None, seed: str = "0",
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> Iterator[SprtState]:
    """Play pairs until the test decides or ``max_pairs`` are played; yield the test after
    each pair (the same object, updated). ``reference`` is required for 3 players or more
    and refused for 2."""
    seats = load_game(game, **options).players
    if (seats == 2) != (reference is None):
        raise ValueError(
            "a reference player holds the other seats of a table of 3 or more, and only then"
        )
    state = SprtState(bounds)
    for pair in range(max_pairs):
        outcome, first, second = pair_deals(
            game, options, candidate, baseline, reference, pair=pair, seed=seed,
            time_limit=time_limit,
        )
        state.faults += (first.fault is not None) + (second.fault is not None)
        state.record(outcome)
        yield state
        if state.decision:
            return
