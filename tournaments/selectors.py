"""Reads that the API, the admin, the web pages and the commands share."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, QuerySet

from cardkit.stats import elo
from tournaments.models import (
    Entrant,
    FitEntry,
    Rating,
    RatingChange,
    RatingFit,
    Tournament,
    TournamentMatch,
)


@dataclass(slots=True)
class StandingLine:
    bot_id: int
    name: str
    games: int = 0
    points: float = 0.0
    losses: int = 0
    draws: int = 0


@dataclass(slots=True)
class Standings:
    """A tournament's table: lines best first, the crosstable and duplicate deck scores.

    ``crosstable[a][b]`` is (a's score against b, games they met in): 1 for each match
    ``b`` lost at a table with ``a``, 0 for each one ``a`` lost, 1/2 for the others. A
    line's points are its crosstable row's sum. ``decks[d][bot]`` is the bot's points
    over the matches dealt deck ``d`` (duplicate tournaments only).
    """

    lines: list[StandingLine]
    crosstable: dict[int, dict[int, tuple[float, int]]]
    decks: dict[int, dict[int, float]] = field(default_factory=dict)


def tournament_standings(tournament: Tournament) -> Standings:
    """Return the standings from the tournament's finished matches (a read, no writes)."""
    entrants = list(
        Entrant.objects.filter(tournament=tournament).select_related("bot").order_by("order")
    )
    lines = {e.bot_id: StandingLine(bot_id=e.bot_id, name=e.bot.name) for e in entrants}
    cross: dict[int, dict[int, list]] = {a: {b: [0.0, 0] for b in lines if b != a} for a in lines}
    decks: dict[int, dict[int, float]] = defaultdict(lambda: dict.fromkeys(lines, 0.0))
    finished = TournamentMatch.objects.filter(
        tournament=tournament, status=TournamentMatch.Status.FINISHED
    ).values_list("table", "deck", "match__loser")
    for table, deck, loser in finished:
        for seat, bot_id in enumerate(table):
            line = lines[bot_id]
            line.games += 1
            if loser is None:
                line.draws += 1
            elif loser == seat:
                line.losses += 1
            for other, other_id in enumerate(table):
                if other == seat:
                    continue
                score = elo.pairwise_score(seat, other, loser)
                cell = cross[bot_id][other_id]
                cell[0] += score
                cell[1] += 1
                line.points += score
                if deck is not None:
                    decks[deck][bot_id] += score
    ordered = sorted(lines.values(), key=lambda line: (-line.points, line.losses, line.name))
    return Standings(
        lines=ordered,
        crosstable={a: {b: (c[0], c[1]) for b, c in row.items()} for a, row in cross.items()},
        decks=dict(sorted(decks.items())),
    )


# --- Leaderboards -----------------------------------------------------------------------


@dataclass(slots=True)
class LeaderboardLine:
    """A bot's line: fitted rating with its interval (None before its first fit) and Elo."""

    rank: int | None
    bot_id: int
    name: str
    rating: float | None
    low: float | None
    high: float | None
    los: float | None
    provisional: bool
    elo: float
    games: int
    losses: int
    draws: int

    @property
    def loss_rate(self) -> float | None:
        return self.losses / self.games if self.games else None


def latest_fit(pool: str) -> RatingFit | None:
    return RatingFit.objects.filter(pool=pool).order_by("-fitted_at", "-id").first()


def leaderboard(pool: str) -> tuple[RatingFit | None, list[LeaderboardLine]]:
    """Return the pool's newest fit and its lines in the fit's order.

    Bots rated since that fit follow it, by Elo, marked provisional.
    """
    fit = latest_fit(pool)
    ratings = {r.bot_id: r for r in Rating.objects.filter(pool=pool).select_related("bot")}
    lines = []
    fitted = set()
    if fit is not None:
        for entry in FitEntry.objects.filter(fit=fit).select_related("bot").order_by("rank"):
            rating = ratings.get(entry.bot_id)
            fitted.add(entry.bot_id)
            lines.append(
                LeaderboardLine(
                    rank=entry.rank,
                    bot_id=entry.bot_id,
                    name=entry.bot.name,
                    rating=entry.rating,
                    low=entry.low,
                    high=entry.high,
                    los=entry.los,
                    provisional=entry.provisional,
                    elo=rating.elo if rating else elo.INITIAL_RATING,
                    games=rating.games if rating else entry.games,
                    losses=rating.losses if rating else entry.losses,
                    draws=rating.draws if rating else 0,
                )
            )
    for rating in sorted(ratings.values(), key=lambda r: -r.elo):
        if rating.bot_id not in fitted:
            lines.append(
                LeaderboardLine(
                    rank=None, bot_id=rating.bot_id, name=rating.bot.name, rating=None,
                    low=None, high=None, los=None, provisional=True, elo=rating.elo,
                    games=rating.games, losses=rating.losses, draws=rating.draws,
                )
            )  # fmt: skip
    return fit, lines


@dataclass(frozen=True, slots=True)
class PoolStanding:
    """A bot's standing in a pool as the ladder reads it: Elo and games, and its line in
    the newest fit (None if not fitted) with its likelihood of superiority over the bot
    next down in the fit, ``below``."""

    elo: float
    games: int
    rating: float | None = None
    low: float | None = None
    high: float | None = None
    los: float | None = None
    below: int | None = None


def pools_standings(pools: list[str]) -> dict[str, dict[int, PoolStanding]]:
    """Return each rated or fitted bot's standing in each of these pools.

    A bot fitted but with no Elo row yet stands at the initial Elo with no games. Reads
    the newest fit of each pool (an index lookup each), then every line of those fits
    and every Elo row of the pools in one query each.
    """
    newest = {}
    for pool in pools:
        fit = latest_fit(pool)
        if fit is not None:
            newest[fit.pk] = pool
    rated: dict[str, dict[int, tuple[float, int]]] = defaultdict(dict)
    for pool, bot_id, rating, games in Rating.objects.filter(pool__in=pools).values_list(
        "pool", "bot_id", "elo", "games"
    ):
        rated[pool][bot_id] = (rating, games)
    standings: dict[str, dict[int, PoolStanding]] = {pool: {} for pool in pools}
    lines = (
        FitEntry.objects.filter(fit_id__in=newest)
        .order_by("fit_id", "rank")
        .values_list("fit_id", "bot_id", "rating", "low", "high", "los")
    )
    fitted: dict[str, list[tuple]] = defaultdict(list)
    for fit_id, *line in lines:
        fitted[newest[fit_id]].append(line)
    for pool in pools:
        elos = rated[pool]
        lines_of_pool = fitted[pool]
        for number, (bot_id, rating, low, high, los) in enumerate(lines_of_pool):
            below = lines_of_pool[number + 1][0] if number + 1 < len(lines_of_pool) else None
            elo_now, games = elos.get(bot_id, (elo.INITIAL_RATING, 0))
            standings[pool][bot_id] = PoolStanding(elo_now, games, rating, low, high, los, below)
        for bot_id, (elo_now, games) in elos.items():
            if bot_id not in standings[pool]:
                standings[pool][bot_id] = PoolStanding(elo_now, games)
    return standings


def bot_rating_history(
    bot_id: int, pool: str | None = None, *, points: int | None = None
) -> dict[str, list]:
    """Return a bot's Elo after each rated match and its fitted rating at each fit.

    With ``points``, only the newest ``points`` Elo changes and fits of each pool the bot
    is rated in, each change numbered (``number``: its place among the bot's rated matches
    of the pool): a chart of a long history draws its end, read through the index on
    (bot, pool, sequence), in one query per pool and one for the pools.
    """
    if points is not None:
        return _bot_rating_history_recent(bot_id, pool, points)
    changes = RatingChange.objects.filter(bot_id=bot_id).order_by("pool", "sequence")
    fits = (
        FitEntry.objects.filter(bot_id=bot_id)
        .select_related("fit")
        .order_by("fit__pool", "fit__fitted_at", "fit_id")
    )
    if pool is not None:
        changes = changes.filter(pool=pool)
        fits = fits.filter(fit__pool=pool)
    return {
        "elo": list(changes.values("pool", "match_id", "before", "after", "lost", "created_at")),
        "fits": [_fit_point(entry) for entry in fits],
    }


def bot_rating_changes(bot_id: int, pool: str | None = None) -> QuerySet:
    """A bot's rating changes (of one pool, or all), as values, in no order: the API
    pages them newest first by id, a walk of the (bot, id) index."""
    changes = RatingChange.objects.filter(bot_id=bot_id)
    if pool is not None:
        changes = changes.filter(pool=pool)
    return changes.values("id", "pool", "match_id", "before", "after", "lost", "created_at")


def bot_rating_page_fits(
    bot_id: int, pool: str | None, page: list[dict], *, newest: bool, oldest: bool, limit: int
) -> list[dict]:
    """Return the fits of the bot that belong with ``page``, a page of its rating changes
    oldest first: those fitted from its first change on (from any time on the oldest
    page) until the first change of the newer page (until now on the newest page), at
    most the newest ``limit`` of them, oldest first. Pages so cut share no fit."""
    fits = FitEntry.objects.filter(bot_id=bot_id).select_related("fit")
    if pool is not None:
        fits = fits.filter(fit__pool=pool)
    if page and not oldest:
        fits = fits.filter(fit__fitted_at__gte=page[0]["created_at"])
    if page and not newest:
        newer = (
            bot_rating_changes(bot_id, pool).filter(id__gt=page[-1]["id"]).order_by("id")
            .values_list("created_at", flat=True).first()
        )  # fmt: skip
        if newer is not None:
            fits = fits.filter(fit__fitted_at__lt=newer)
    newest_fits = fits.order_by("-fit__fitted_at", "-fit_id")[:limit]
    return [_fit_point(entry) for entry in reversed(newest_fits)]


def _fit_point(entry: FitEntry) -> dict:
    return {
        "pool": entry.fit.pool,
        "fitted_at": entry.fit.fitted_at,
        "rank": entry.rank,
        "rating": entry.rating,
        "low": entry.low,
        "high": entry.high,
        "provisional": entry.provisional,
        "games": entry.games,
    }


def _bot_rating_history_recent(bot_id: int, pool: str | None, points: int) -> dict[str, list]:
    rated = Rating.objects.filter(bot_id=bot_id).order_by("pool")
    if pool is not None:
        rated = rated.filter(pool=pool)
    history: dict[str, list] = {"elo": [], "fits": []}
    for key, games in rated.values_list("pool", "games"):
        newest = list(
            RatingChange.objects.filter(bot_id=bot_id, pool=key)
            .order_by("-sequence")
            .values("pool", "match_id", "before", "after", "lost", "created_at")[:points]
        )
        total = max(games, len(newest))
        for newer, change in enumerate(newest):
            change["number"] = total - newer
        history["elo"] += newest[::-1]
        # A fit's entries name the bot's games through the fit: only the fits since the
        # oldest change drawn are on the chart's scale.
        since = newest[-1]["number"] - 1 if newest else 0
        fits = (
            FitEntry.objects.filter(bot_id=bot_id, fit__pool=key, games__gte=since)
            .select_related("fit")
            .order_by("-fit_id")[:points]
        )
        history["fits"] += [_fit_point(entry) for entry in reversed(fits)]
    return history


def tournament_progress(tournament: Tournament) -> dict:
    """Return matches done / total, by status, and the round being played."""
    # Counted in the database: a tournament of thousands of matches sends five rows.
    counts = (
        TournamentMatch.objects.filter(tournament=tournament)
        .order_by("status")
        .values_list("status")
        .annotate(count=Count("id"))
    )
    return {
        "done": tournament.matches_done,
        "total": tournament.matches_total,
        "round": tournament.current_round,
        "rounds": tournament.rounds_total,
        "by_status": dict(counts),
    }
