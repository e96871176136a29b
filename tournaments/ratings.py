"""Ratings: the Elo ledger (each rated match applied once, in order), its replay, the fits.

Elo moves after every rated match (``ratings_apply_match``, run by a task when a match
finishes, with ``ratings_apply_pending`` as the backstop); ``ratings_recompute`` replays
the ledger from the match archive to check it; ``ratings_fit`` fits a pool's leaderboard
over all its results (Bradley-Terry with bootstrap intervals).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q, QuerySet

from bots.models import Bot
from cardkit.stats import elo
from cardkit.stats.bradley_terry import fit_ratings
from games.models import Match, Seat
from tournaments.models import (
    FitEntry,
    LadderMatch,
    RatedMatch,
    Rating,
    RatingChange,
    RatingFit,
    RatingPool,
)
from tournaments.pools import POOLS, pool_game, pool_of


def ratings_apply_match(*, match_id: int) -> RatedMatch | None:
    """Apply a finished rated match to its pool's Elo ratings, once; return its ledger row.

    Matches of the pool that finished earlier and are not applied yet are applied first,
    so that the ratings follow the order in which matches finished. Applying a match that
    is applied already changes nothing and returns its row; a match that is unrated or
    not finished returns None.
    """
    with transaction.atomic():
        match = Match.objects.filter(pk=match_id).first()
        if match is None or not match.rated or match.status != Match.Status.FINISHED:
            return None
        return ratings_apply(match=match)


def ratings_apply(*, match: Match) -> RatedMatch:
    """Apply a finished rated match (and the pool's earlier ones) once; return its row.

    Should be called inside a transaction; locks the match's pool until it commits.
    """
    pool = _pool_lock(pool_of(match.game, match.players))
    done = RatedMatch.objects.filter(match_id=match.pk).first()
    if done is not None:
        return done
    earlier = (
        rated_matches_pending(pool.key)
        .filter(
            Q(finished_at__lt=match.finished_at) | Q(finished_at=match.finished_at, pk__lt=match.pk)
        )
        .order_by("finished_at", "pk")
    )
    for other in earlier:
        _rating_apply_one(pool, other)
    return _rating_apply_one(pool, match)


def _pool_lock(key: str) -> RatingPool:
    RatingPool.objects.get_or_create(key=key)
    return RatingPool.objects.select_for_update().get(key=key)


def rated_matches_pending(pool: str) -> QuerySet[Match]:
    """Return the pool's finished rated matches whose result is not applied yet."""
    game, players = pool_game(pool)
    return Match.objects.filter(
        game=game, players=players, rated=True, status=Match.Status.FINISHED,
        rating_applied=False,
    )  # fmt: skip


def _rating_apply_one(pool: RatingPool, match: Match) -> RatedMatch:
    """Write the ledger row and rating changes of one match; the pool row must be locked."""
    table = list(
        Seat.objects.filter(match_id=match.pk).order_by("index").values_list("index", "bot_id")
    )
    bot_ids = [bot_id for _, bot_id in table]
    pool.matches_applied += 1
    pool.save(update_fields=["matches_applied"])
    Match.objects.filter(pk=match.pk).update(rating_applied=True)
    loser = match.loser
    entry = RatedMatch.objects.create(
        match=match,
        pool=pool.key,
        sequence=pool.matches_applied,
        loser_bot_id=bot_ids[loser] if loser is not None and loser < len(bot_ids) else None,
    )
    # Only tables of distinct bots are rated: a person's seat, or one bot in two seats,
    # says nothing about bots' strength against each other.
    if None in bot_ids or len(set(bot_ids)) != len(bot_ids):
        return entry
    ratings = {
        r.bot_id: r
        for r in Rating.objects.select_for_update().filter(pool=pool.key, bot_id__in=bot_ids)
    }
    for bot_id in bot_ids:
        if bot_id not in ratings:
            ratings[bot_id] = Rating.objects.create(
                pool=pool.key, bot_id=bot_id, elo=elo.INITIAL_RATING
            )
    before = [ratings[bot_id].elo for bot_id in bot_ids]
    after = elo.elo_update(before, loser, k=settings.RATING_ELO_K)
    RatingChange.objects.bulk_create(
        RatingChange(
            match=match,
            bot_id=bot_id,
            pool=pool.key,
            sequence=entry.sequence,
            seat=seat,
            before=before[seat],
            after=after[seat],
            lost=seat == loser,
        )
        for seat, bot_id in enumerate(bot_ids)
    )
    for seat, bot_id in enumerate(bot_ids):
        rating = ratings[bot_id]
        rating.elo = after[seat]
        rating.games += 1
        rating.losses += seat == loser
        rating.draws += loser is None
        rating.save(update_fields=["elo", "games", "losses", "draws", "updated_at"])
    return entry


def ratings_apply_pending() -> int:
    """Apply every finished rated match not applied yet (a backstop); return how many."""
    applied = 0
    for pool in POOLS:
        for match_id in (
            rated_matches_pending(pool).order_by("finished_at", "pk").values_list("pk", flat=True)
        ):
            applied += ratings_apply_match(match_id=match_id) is not None
    return applied


@dataclass(slots=True)
class Recomputation:
    """What a recompute found: matches replayed, and rows that differ from the replay."""

    matches: int = 0
    mismatches: list[str] = field(default_factory=list)
    seconds: float = 0.0


def ratings_recompute(*, fix: bool = False) -> Recomputation:
    """Replay every applied rated match from the archive and compare with the stored Elo.

    The replay reads each match's seats and loser from the match archive and applies
    them in the ledger's order with today's K. With ``fix``, rewrite the stored rating
    changes and ratings to the replay's values (after K changed, say), in one transaction.
    """
    started = time.perf_counter()
    report = Recomputation()
    with transaction.atomic():
        if fix:
            for key in POOLS:
                _pool_lock(key)
        ledger = list(
            RatedMatch.objects.order_by("pool", "sequence").values_list(
                "pool", "match_id", "match__loser"
            )
        )
        tables: dict[int, list] = defaultdict(list)
        for match_id, bot_id in (
            Seat.objects.filter(match__rating_entry__isnull=False)
            .order_by("match_id", "index")
            .values_list("match_id", "bot_id")
        ):
            tables[match_id].append(bot_id)
        stored = {
            (match_id, bot_id): (before, after)
            for match_id, bot_id, before, after in RatingChange.objects.values_list(
                "match_id", "bot_id", "before", "after"
            )
        }
        current: dict[tuple[str, int], list] = {}
        replayed: dict[tuple[int, int], tuple[float, float]] = {}
        for pool, match_id, loser in ledger:
            report.matches += 1
            table = tables.get(match_id, [])
            if None in table or len(set(table)) != len(table):
                continue
            lines = [current.setdefault((pool, b), [elo.INITIAL_RATING, 0, 0, 0]) for b in table]
            after = elo.elo_update([line[0] for line in lines], loser, k=settings.RATING_ELO_K)
            for seat, (bot_id, line) in enumerate(zip(table, lines, strict=True)):
                replayed[match_id, bot_id] = (line[0], after[seat])
                line[0] = after[seat]
                line[1] += 1
                line[2] += seat == loser
                line[3] += loser is None
        for key, values in replayed.items():
            if stored.get(key) != values:
                report.mismatches.append(
                    f"match {key[0]} bot {key[1]}: stored {stored.get(key)}, replayed {values}"
                )
        for key in stored.keys() - replayed.keys():
            report.mismatches.append(f"match {key[0]} bot {key[1]}: stored but not replayed")
        ratings = {(r.pool, r.bot_id): r for r in Rating.objects.all()}
        for key, (rating, games, losses, draws) in current.items():
            row = ratings.get(key)
            if row is None or (row.elo, row.games, row.losses, row.draws) != (
                rating,
                games,
                losses,
                draws,
            ):
                report.mismatches.append(
                    f"rating {key}: stored {row and row.elo}, replayed {rating}"
                )
        ledgered = {match_id for _, match_id, _ in ledger}
        flagged = set(Match.objects.filter(rating_applied=True).values_list("pk", flat=True))
        for match_id in sorted(ledgered ^ flagged):
            report.mismatches.append(
                f"match {match_id}: in the ledger {match_id in ledgered}, "
                f"marked applied {match_id in flagged}"
            )
        if fix and report.mismatches:
            Match.objects.filter(pk__in=ledgered - flagged).update(rating_applied=True)
            Match.objects.filter(pk__in=flagged - ledgered).update(rating_applied=False)
            for (match_id, bot_id), (before, after) in replayed.items():
                RatingChange.objects.filter(match_id=match_id, bot_id=bot_id).update(
                    before=before, after=after
                )
            for (pool, bot_id), (rating, games, losses, draws) in current.items():
                Rating.objects.update_or_create(
                    pool=pool,
                    bot_id=bot_id,
                    defaults={"elo": rating, "games": games, "losses": losses, "draws": draws},
                )
    report.seconds = time.perf_counter() - started
    return report


# --- Ratings: the batch fit -------------------------------------------------------------


def pool_results(pool: str) -> tuple[list[list[int]], list[int | None], list[int | None], int]:
    """Return the tables, losers and groups of every rated match applied to the pool.

    In ledger order. A match's group is its ladder table (the deals of one deck in every
    seat rotation, which the fit links), None for a match on its own. Also return the
    ledger sequence of the last match.
    """
    tables: list[list[int]] = []
    losers: list[int | None] = []
    matches: list[int] = []
    current = None
    for match_id, seat, bot_id, lost in (
        RatingChange.objects.filter(pool=pool)
        .order_by("sequence", "seat")
        .values_list("match_id", "seat", "bot_id", "lost")
        .iterator(chunk_size=20000)
    ):
        if match_id != current:
            current = match_id
            matches.append(match_id)
            tables.append([])
            losers.append(None)
        tables[-1].append(bot_id)
        if lost:
            losers[-1] = seat
    linked = dict(
        LadderMatch.objects.filter(pool=pool, table__isnull=False).values_list("match_id", "table")
    )
    groups = [linked.get(match_id) for match_id in matches]
    last = RatedMatch.objects.filter(pool=pool).aggregate(last=Max("sequence"))["last"] or 0
    return tables, losers, groups, last


def ratings_fit(
    *, pool: str, bootstraps: int | None = None, force: bool = False
) -> RatingFit | None:
    """Fit the pool's ratings over all its rated results and store the fit (the leaderboard).

    Return None when nothing was applied since the newest fit (the fit would be the same),
    unless ``force``.
    """
    tables, losers, groups, last = pool_results(pool)
    latest = RatingFit.objects.filter(pool=pool).order_by("-fitted_at", "-id").first()
    if latest is not None and latest.through_sequence == last and not force:
        return None
    anchor = Bot.objects.filter(name=settings.RATING_ANCHOR_BOT).first()
    bootstraps = settings.RATING_BOOTSTRAPS if bootstraps is None else bootstraps
    started = time.perf_counter()
    entries = fit_ratings(
        tables,
        losers,
        anchor=anchor.pk if anchor else None,
        anchor_rating=settings.RATING_ANCHOR,
        bootstraps=bootstraps,
        seed=last,
        groups=groups,
    )
    seconds = time.perf_counter() - started
    with transaction.atomic():
        fit = RatingFit.objects.create(
            pool=pool,
            matches=len(tables),
            through_sequence=last,
            bootstraps=bootstraps,
            anchor=anchor,
            anchor_rating=settings.RATING_ANCHOR,
            seconds=seconds,
        )
        FitEntry.objects.bulk_create(
            FitEntry(
                fit=fit,
                bot_id=entry.player,
                rank=rank,
                rating=entry.rating,
                low=entry.low,
                high=entry.high,
                los=entry.los,
                games=entry.games,
                losses=entry.losses,
                provisional=entry.high - entry.low > settings.RATING_PROVISIONAL_WIDTH,
            )
            for rank, entry in enumerate(entries, start=1)
        )
    return fit
