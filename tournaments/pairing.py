"""How the ladder chooses a table. No Django here.

The live ladder (``tournaments.services.ladder_tick``) and the simulation harness
(``benchmarks.ladder_power``) call these functions, so what the harness measures is what
the ladder does.

Two rules:

- ``closest_table``: the bot with the fewest games, then the bots whose ratings are
  closest to its own (the ladder's first rule).
- ``informative_table``: the table whose result would change the order most. A bot's
  weight is the chance that it is ordered wrongly against a neighbour (one minus the
  likelihood of superiority) times its interval's width, which is wide while it has few
  games; the seed bot is drawn with that weight and the table is filled with the
  neighbours in rating order whose pair is least separated. A bot never fitted is the
  seed first (the fewest games first); otherwise, with probability ``explore``, the seed
  is drawn uniformly, so that every bot seeds at least a share ``explore / bots`` of
  the tables and none starves.

The chance of a wrong order between two neighbours is the fit's own (``Candidate.los``
over ``Candidate.below``): the fit takes it from the spread of the difference of the two
ratings. The two intervals alone would count twice what the ratings share: each is
measured from the anchor, so far from the anchor both are wide, neighbours look tied
when their difference is well measured, and the ladder spent its tables there. (Measured
with ``benchmarks.ladder_power``: Volynshchik 3p 2,568 games to a confident order with
the intervals, 1,332 with the fit's likelihood; Durak 4p 2,040 and 952.) Only when the
bot between two candidates is busy elsewhere, so that they are neighbours here and not
in the fit, does the chance come from the two intervals.

Both keep the owner rule: no two bots of one owner at a table, except built-in bots,
which the arena itself runs. Both are deterministic for a given ``rng``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from cardkit.stats.scales import Z95, log_normal_sf

# A bot never fitted has no interval: it counts as this wide (Elo points).
UNFITTED_WIDTH = 1000.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bot the ladder may seat: its rating (fitted, else Elo) and 95% interval, and its
    fit's likelihood of superiority ``los`` over the bot next down in the fit, ``below``."""

    key: Hashable
    owner: Hashable
    builtin: bool
    rating: float
    games: int
    low: float | None = None
    high: float | None = None
    los: float | None = None
    below: Hashable | None = None

    @property
    def sd(self) -> float:
        if self.low is None or self.high is None:
            return UNFITTED_WIDTH / (2.0 * Z95)
        return max(self.high - self.low, 1e-9) / (2.0 * Z95)


def compatible(a: Candidate, b: Candidate) -> bool:
    """Return whether two bots may sit at one rated table (the owner rule)."""
    if a.builtin and b.builtin:
        return True
    return a.owner != b.owner


def closest_table(candidates: Sequence[Candidate], players: int) -> list[Candidate] | None:
    """Return a table: the bot with fewest games, then the closest-rated compatible bots."""
    ordered = sorted(candidates, key=lambda c: (c.games, _order(c.key)))
    if len(ordered) < players:
        return None
    first = ordered[0]
    table = [first]
    for bot in sorted(ordered[1:], key=lambda c: (abs(c.rating - first.rating), c.games)):
        if len(table) == players:
            break
        if all(compatible(bot, seated) for seated in table):
            table.append(bot)
    return table if len(table) == players else None


def overlap(a: Candidate, b: Candidate) -> float:
    """Return the chance that a and b are in the wrong order (1 - LOS of the better one)."""
    return math.exp(log_overlap(a, b))


def log_overlap(a: Candidate, b: Candidate) -> float:
    """Return the log of ``overlap``: finite however far apart a and b are.

    The fit's own likelihood when b is a's next bot down in the fit, else from the two
    intervals as if independent (see the module's text). A fit's LOS of exactly 1 (the
    difference past 8.3 of its standard deviations, where a float's 1 - LOS is 0) keeps
    no figure, so the intervals' tail, in log space, orders such pairs instead: with
    every pair that far apart the weights were all 0 and the seed was drawn blind.
    """
    for upper, lower in ((a, b), (b, a)):
        neighbours = upper.below is not None and upper.below == lower.key
        if neighbours and upper.los is not None and upper.los < 1.0:
            return math.log1p(-upper.los)
    spread = math.hypot(a.sd, b.sd)
    return log_normal_sf(abs(a.rating - b.rating) / spread)


def informative_table(
    candidates: Sequence[Candidate],
    players: int,
    rng: random.Random,
    *,
    explore: float = 0.1,
) -> list[Candidate] | None:
    """Return the table whose result would change the order most (see the module's text).

    Costs a sort and a pass over the candidates: well under a millisecond per hundred.
    """
    if len(candidates) < players:
        return None
    ranked = sorted(candidates, key=lambda c: (-c.rating, _order(c.key)))
    size = len(ranked)
    # gap[i]: log of the chance that ranked[i] and ranked[i + 1] are in the wrong order.
    gap = [log_overlap(ranked[i], ranked[i + 1]) for i in range(size - 1)]
    unfitted = [i for i, c in enumerate(ranked) if c.low is None]
    if unfitted:
        seed = min(unfitted, key=lambda i: (ranked[i].games, _order(ranked[i].key)))
    elif rng.random() < explore:
        seed = rng.randrange(size)
    else:
        # Weights in log space, scaled by the largest before leaving it, so that pairs
        # separated past any float's tail still weigh by how far apart they are.
        logs = []
        for i, c in enumerate(ranked):
            near = max(gap[i - 1] if i else -math.inf, gap[i] if i < size - 1 else -math.inf)
            logs.append(near + math.log(c.sd))
        top = max(logs)
        weights = [math.exp(value - top) for value in logs]
        seed = rng.choices(range(size), weights=weights)[0]
    return _fill(ranked, gap, seed, players)


def _fill(
    ranked: list[Candidate], gap: list[float], seed: int, players: int
) -> list[Candidate] | None:
    """Grow a table from ``seed`` along the rating order, least separated side first."""
    table = [ranked[seed]]
    below, above = seed + 1, seed - 1
    # The pair to cross next on each side: its gap, or the gap to the last bot seated.
    while len(table) < players:
        down = below < len(ranked)
        up = above >= 0
        if not down and not up:
            return None
        go_down = gap[below - 1] >= gap[above] if down and up else down
        if go_down:
            bot, below = ranked[below], below + 1
        else:
            bot, above = ranked[above], above - 1
        if all(compatible(bot, seated) for seated in table):
            table.append(bot)
    return table


def _order(key: Hashable) -> tuple:
    """A sort key that orders ints as numbers and anything else by its text."""
    return (0, key, "") if isinstance(key, int) else (1, 0, str(key))


def seat_rotations(table: Sequence[Hashable]) -> list[list[Hashable]]:
    """Return the N seat rotations of an N-player table: one duplicate deck per rotation."""
    return [list(table[r:]) + list(table[:r]) for r in range(len(table))]
