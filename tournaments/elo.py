"""Multi-player Elo by pairwise decomposition. No Django here.

docs/rules.md's result names one loser or none, and everyone else finishes even. A match of
N players is read as N(N-1)/2 two-player games played at once: the loser lost to each
other player, every two non-losers drew, and a match without a loser (a drawn deal) is
no game at all and changes nothing. Each player's change is the sum of his pairwise
changes, computed from the ratings before the match, with ``K / (N - 1)`` per pair so
that a match moves a rating about as much whatever the number of players.
"""

from __future__ import annotations

from collections.abc import Sequence

INITIAL_RATING = 1500.0
DEFAULT_K = 16.0


def expected_score(rating: float, opponent: float) -> float:
    """Return the score ``rating`` expects against ``opponent`` (0 to 1)."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


def pairwise_score(seat: int, other: int, loser: int | None) -> float:
    """Return seat's score against other in a match that ``loser`` lost."""
    if seat == loser:
        return 0.0
    if other == loser:
        return 1.0
    return 0.5


def elo_update(ratings: Sequence[float], loser: int | None, *, k: float = DEFAULT_K) -> list[float]:
    """Return the ratings after a match, seat by seat; ``ratings`` are those before it.

    ``loser`` is the losing seat, or None for a drawn match, which changes nothing.
    """
    n = len(ratings)
    if n < 2:
        raise ValueError("a match has at least 2 players")
    if loser is None:
        return list(ratings)
    if not 0 <= loser < n:
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
