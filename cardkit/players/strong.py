"""The `strong` built-in player: determinised Monte Carlo search over greedy playouts.

The candidates are the legal moves (the ``budget`` that the greedy rules like best, when
there are more).  For each of ``budget // len(candidates)`` sampled worlds (at least one),
every candidate is played in that world and the deal is played out to its end by the
greedy rules for every seat; a move scores 2 when the seat does not lose, 1 for a drawn
deal, 0 when it loses.  Comparing the moves on the same worlds keeps the noise of the
sampling out of the comparison.  The best total wins; ties go to the greedy choice, then to ``rng``.

The budget counts playouts, not seconds, so a decision depends only on the view and
``rng`` and replays exactly.
"""

from __future__ import annotations

import random

from cardkit.engine import State, load_state

from .determinise import durak_world, volynshchik_world
from .greedy import RANK, durak_order, durak_pick, greedy_choice, volynshchik_pick

SUITS = "SHDC"
# Playouts per decision.  On the reference machine (CPython 3.11, 2 cores) a decision
# takes 25-35 ms at the median and under 0.1 s at the 95th percentile, for every game and
# player count, and `python -m benchmarks.bots --deals 1000` takes 20 minutes.
DEFAULT_BUDGET = 96


class StrongPlayer:
    """Choose a move by determinised Monte Carlo search with ``budget`` greedy playouts."""

    name = "strong"

    def __init__(self, game: str, budget: int = DEFAULT_BUDGET) -> None:
        if not isinstance(budget, int) or budget < 1:
            raise ValueError("the budget is a number of playouts, at least 1")
        self.game = game
        self.budget = budget

    def choose(self, view: dict, legal_moves: list[dict], rng: random.Random) -> dict:
        if not legal_moves:
            raise ValueError("no legal move to choose from")
        if len(legal_moves) == 1:
            return legal_moves[0]
        preferred = greedy_choice(view, legal_moves, rng)
        candidates = _shortlist(view, legal_moves, preferred, self.budget)
        if len(candidates) == 1:
            return preferred
        seat = view["seat"]
        if view["game"] == "durak":
            sample, playout = durak_world, _durak_playout
        else:
            sample, playout = volynshchik_world, _volynshchik_playout
        totals = [0] * len(candidates)
        for _world in range(max(1, self.budget // len(candidates))):
            data = sample(view, rng)
            world = load_state(data)
            context = _context(view, data)
            for i, move in enumerate(candidates):
                loser = playout(world.play(move), move, context, rng)
                totals[i] += 1 if loser is None else 2 * (loser != seat)
        best = max(totals)
        if totals[candidates.index(preferred)] == best:
            return preferred
        return candidates[rng.choice([i for i, t in enumerate(totals) if t == best])]


def _shortlist(view: dict, moves: list[dict], preferred: dict, limit: int) -> list[dict]:
    """Return the moves worth a playout each: all of them, or the ``limit`` greedy likes best.

    A Durak defender with a big hand facing several cards can have thousands of ways to
    beat them; the budget bounds the playouts, so it must bound the candidates too.
    """
    if len(moves) <= limit:
        return moves
    if view["game"] == "durak":
        trump = view["trump_suit"]
        ranked = sorted(moves, key=lambda m: durak_order(m, trump))
    else:
        ranked = sorted(moves, key=lambda m: RANK[m["card"][0]] if "card" in m else -1)
    shortlist = ranked[:limit]
    if preferred not in shortlist:
        shortlist[-1] = preferred
    return shortlist


def _context(view: dict, data: dict) -> dict:
    """Return what a playout needs beyond the state: facts the state keeps private."""
    if view["game"] == "durak":
        return {
            "trump": view["trump_suit"],
            "deck_size": view["deck_size"],
            "players": view["players"],
            "talon": view["talon_size"],
            "discard": len(view["discard"]),
            "table": len(view["table"]),
        }
    return {"reserves": data["reserves"], "pile": view["pile"], "seat": view["seat"]}


def _durak_playout(state: State, first: dict, context: dict, rng: random.Random) -> int | None:
    """Play ``state`` (just after ``first``) out greedily; return the loser, None if drawn.

    The greedy rules need the talon size, which the state does not expose; it follows
    from the deck size less the cards in hands, on the table and in the discard, which
    the playout tracks from the moves.
    """
    trump = context["trump"]
    deck_size = context["deck_size"]
    seats = range(context["players"])
    talon = context["talon"]
    discard = context["discard"]
    table = context["table"]
    move = first
    while True:
        kind = move["type"]
        if kind == "attack":
            table = len(move["cards"])
        else:
            if kind == "beat":
                discard += 2 * table
            table = 0
            if talon:
                talon = deck_size - discard - sum(len(state.hand(p)) for p in seats)
        if state.is_over:
            return state.result["loser"]
        moves = state.legal_moves()
        move = moves[0] if len(moves) == 1 else durak_pick(moves, trump, talon, rng)
        state = state.play(move)


def _volynshchik_playout(
    state: State, first: dict, context: dict, rng: random.Random
) -> int | None:
    """Play ``state`` (just after ``first``) out greedily; return the loser, None if drawn.

    The greedy rules need the top card, which the state does not expose; the playout
    keeps the pile from the moves.
    """
    reserves = context["reserves"]
    pile = list(context["pile"])
    move = first
    mover = context["seat"]
    while True:
        kind = move["type"]
        if kind == "lead":
            pile.append(move["card"])
        elif kind == "take":
            pile.pop()
        elif kind == "cover":
            if state.to_move == mover:
                pile.append(move["card"])
            else:
                pile.clear()  # He covered with his last card: the pile leaves play.
        if state.is_over:
            return state.result["loser"]
        seat = state.to_move
        moves = state.legal_moves()
        if len(moves) == 1:
            move = moves[0]
        else:
            trump = state.trump_of(seat)
            move = volynshchik_pick(
                moves,
                hand=state.hand(seat),
                top=pile[-1] if pile else None,
                reserve=reserves[seat],
                trump=None if trump is None else SUITS[trump],
                rng=rng,
            )
        mover = seat
        state = state.play(move)
