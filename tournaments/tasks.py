"""Celery tasks of tournaments, ratings and the ladder: thin, idempotent wrappers.

Every task takes ids, calls one service and can run twice: the services count attempts,
lock rows and check what is done. Match-playing tasks are acknowledged after they run
and rejected (so re-queued) when their worker process dies; the attempt counter in
``TournamentMatch`` stops a match that kills its worker from coming back for ever.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from tournaments import ladder, ratings, sequential, services
from tournaments.pools import POOLS

# The options of a task that plays a match to its end: re-queued if its worker dies, and
# stopped (softly first) when a match runs longer than any match should.
PLAYS_A_MATCH = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    "soft_time_limit": settings.MATCH_TASK_TIME_LIMIT,
    "time_limit": settings.MATCH_TASK_TIME_LIMIT + 60,
}


@shared_task(**PLAYS_A_MATCH)
def play_tournament_match(tournament_match_id: int) -> str:
    """Play a tournament match to its end, record it and move the tournament on."""
    return services.tournament_match_play(tournament_match_id=tournament_match_id)


@shared_task(**PLAYS_A_MATCH)
def play_ladder_match(match_id: int) -> str:
    """Play a ladder table (its deals one after another) to its end and rate each deal.

    One task for the table's N deals: a deal of built-in bots takes seconds, and N deals
    of HTTP bots at their time limit per move stay within ``MATCH_TASK_TIME_LIMIT``.
    """
    return ladder.ladder_match_play(match_id=match_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def apply_match_ratings(match_id: int) -> None:
    """Apply a finished rated match to the Elo ratings (once, however often it runs)."""
    ratings.ratings_apply_match(match_id=match_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True, time_limit=600)
def fit_pool_ratings(pool: str) -> None:
    """Refit a pool's leaderboard (skipped when nothing changed since the last fit)."""
    ratings.ratings_fit(pool=pool)


@shared_task(ignore_result=True, time_limit=1800)
def refit_all_pools() -> None:
    """Refit every pool that has new results: the ladder's periodic refit."""
    for pool in POOLS:
        ratings.ratings_fit(pool=pool)


@shared_task(ignore_result=True)
def apply_pending_ratings() -> int:
    """Apply any finished rated match whose rating task was lost (a backstop)."""
    return ratings.ratings_apply_pending()


@shared_task(ignore_result=True)
def ladder_tick() -> list[int]:
    """Start the ladder's next rated matches (run by beat)."""
    return ladder.ladder_tick()


@shared_task(ignore_result=True)
def tournaments_watchdog(stale_after: float | None = None) -> list[int]:
    """Send again tournament matches that no worker is playing (run by beat)."""
    return services.tournaments_watchdog(stale_after=stale_after)


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=settings.MATCH_TASK_TIME_LIMIT,
    time_limit=settings.MATCH_TASK_TIME_LIMIT + 60,
)
def play_sequential_pair(pair_id: int) -> str:
    """Play a sequential test's pair (two matches) and update the test.

    Both matches share one match task's time limit, so that the broker's visibility
    timeout still outlasts every task; a pair that runs out is played on (its matches
    resume from their logs) by the task sent again, up to TOURNAMENT_MAX_ATTEMPTS."""
    return sequential.sequential_pair_play(pair_id=pair_id)
