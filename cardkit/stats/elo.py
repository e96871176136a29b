"""Multi-player Elo by pairwise decomposition. No Django here.

docs/rules.md's result names one loser or none, and everyone else finishes even. A match of
N players is read as N(N-1)/2 two-player games played at once: the loser lost to each
other player and every two non-losers drew, so a match without a loser (a drawn deal)
is N(N-1)/2 draws, half a point each, which move the lower rating up and the higher
down, as a draw does in chess. Each player's change is the sum of his pairwise
changes, computed from the ratings before the match, with ``K / (N - 1)`` per pair so
that a match moves a rating about as much whatever the number of players.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardkit.stats.scales import logistic_score

INITIAL_RATING = 1500.0
DEFAULT_K = 16.0


def expected_score(rating: float, opponent: float) -> float:
    """Return the score ``rating`` expects against ``opponent`` (0 to 1)."""
    return float(logistic_score(rating - opponent))


def pairwise_score(seat: int, other: int, loser: int | None) -> float:
    """Return seat's score against other in a match that ``loser`` lost."""
    if seat == loser:
        return 0.0
    if other == loser:
        return 1.0
    return 0.5


def elo_update(ratings: Sequence[float], loser: int | None, *, k: float = DEFAULT_K) -> list[float]:
    """Return the ratings after a match, seat by seat; ``ratings`` are those before it.

    ``loser`` is the losing seat, or None for a drawn match (every two players drew).
    """
    n = len(ratings)
    if n < 2:
        raise ValueError("a match has at least 2 players")
    if loser is not None and not 0 <= loser < n:
        raise ValueError(f"loser must be a seat from 0 to {n - 1}")
    k_pair = k / (n - 1)
    after = []
    for seat, rating in enumerate(ratings):
        change = 0.0
        for other, opponent in enumerate(ratings):
            if other != seat:
                change += pairwise_score(seat, other, loser) - expected_score(rating, opponent)
        after.append(rating + k_pair * change)
    return after
