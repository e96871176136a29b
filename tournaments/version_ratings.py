"""A fitted rating for each version of a bot, with its 95% interval.

The leaderboard's batch fit (``tournaments.ratings``) rates bots, not versions: the live
Elo and the fit stay the bot's. A version's rating is fitted against the bot's
opponents as the newest fit of each pool rates them, held fixed: the maximum-likelihood
rating of the version's rated results under the fit's model (the loser lost to each
other seat, two non-losers drew), with one virtual draw against the opponents' mean
rating as a prior (so that a version that won or lost everything still has a finite
rating) and the normal interval of the likelihood's curvature. The opponents' own
uncertainty is left out, so the interval is somewhat narrow when they have few games.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Max

from bots.headtohead import bot_version_results
from bots.models import Bot
from cardkit.stats.scales import ELO_PER_NATURAL_UNIT as SCALE
from cardkit.stats.scales import Z95, clip_step
from tournaments.models import FitEntry, RatingFit
from tournaments.pools import pool_of

PRIOR_DRAWS = 1.0


@dataclass(frozen=True)
class VersionRating:
    pool: str
    rating: float
    low: float
    high: float
    games: int


def version_ratings(*, bot: Bot) -> dict[int, list[VersionRating]]:
    """Return, per version id, its fitted rating in each pool it played rated matches in."""
    rows = bot_version_results(bot_id=bot.pk)
    pools = {pool_of(row["match__game"], row["match__players"]) for row in rows}
    newest = dict(
        RatingFit.objects.filter(pool__in=pools)
        .values("pool")
        .annotate(newest=Max("id"))
        .values_list("pool", "newest")
    )
    ratings: dict[tuple[int, int], float] = {
        (fit_id, bot_id): rating
        for fit_id, bot_id, rating in FitEntry.objects.filter(
            fit_id__in=list(newest.values())
        ).values_list("fit_id", "bot_id", "rating")
    }
    results: dict[tuple[int, str], list[tuple[float, int, float]]] = defaultdict(list)
    for row in rows:
        pool = pool_of(row["match__game"], row["match__players"])
        opponent = ratings.get((newest.get(pool), row["bot_id"]))
        if opponent is not None and row["mine__bot_version_id"] is not None:
            key = (row["mine__bot_version_id"], pool)
            results[key].append((opponent, row["games"], row["points"]))
    fitted: dict[int, list[VersionRating]] = defaultdict(list)
    for (version_id, pool), games in sorted(results.items()):
        fitted[version_id].append(fit_against(pool, games))
    return dict(fitted)


def fit_against(pool: str, games: list[tuple[float, int, float]]) -> VersionRating:
    """Fit one rating to ``(opponent rating, games, points)`` by Newton's method."""
    prior = sum(r * n for r, n, _ in games) / sum(n for _, n, _ in games)
    terms = [*games, (prior, PRIOR_DRAWS, PRIOR_DRAWS / 2)]
    rating = prior
    for _ in range(100):
        gradient = curvature = 0.0
        for opponent, n, points in terms:
            p = 1.0 / (1.0 + math.exp((opponent - rating) / SCALE))
            gradient += (points - n * p) / SCALE
            curvature += n * p * (1 - p) / SCALE**2
        step = gradient / curvature
        rating += float(clip_step(step))
        if abs(step) < 1e-9:
            break
    half = Z95 / math.sqrt(curvature)
    return VersionRating(
        pool=pool, rating=rating, low=rating - half, high=rating + half,
        games=sum(n for _, n, _ in games),
    )  # fmt: skip
