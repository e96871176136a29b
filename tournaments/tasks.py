"""Celery tasks of tournaments, ratings and the ladder: thin, idempotent wrappers.

Every task takes ids, calls one service and can run twice: the services count attempts,
lock rows and check what is done. Match-playing tasks are acknowledged after they run
and rejected (so re-queued) when their worker process dies; the attempt counter in
``TournamentMatch`` stops a match that kills its worker from coming back for ever.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from games.events import Change, MatchChanged
from tournaments import backpressure, ladder, ratings, sequential, sequential_pairs, services
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


@shared_task(
    **PLAYS_A_MATCH,
    autoretry_for=(Exception,),
    max_retries=settings.TOURNAMENT_MAX_ATTEMPTS,
    retry_backoff=5,
)
def play_ladder_match(match_id: int) -> str:
    """Play one deal of a ladder table to its end, rate it and deal the table's next one.

    A task that fails is sent again (after 5, 10, 20 s): the deal resumes from its move
    log and the attempt counter aborts it past ``TOURNAMENT_MAX_ATTEMPTS``, so a failure
    leaves no table half dealt.
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
    """Send again tournament matches that no worker is playing, fill the free slots of
    the backpressure (a dispatch lost with its process), and send again the sequential
    tests' pairs whose task could not be sent (run by beat)."""
    sent = services.tournaments_watchdog(stale_after=stale_after)
    sequential.sequential_pairs_resend()
    return sent + backpressure.tournament_matches_dispatch()


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=settings.MATCH_TASK_TIME_LIMIT,
    time_limit=settings.MATCH_TASK_TIME_LIMIT + 60,
)
def play_sequential_pair(pair_id: int) -> str:
    """Play a sequential test's pair (two matches) and update the test.

    Both matches share one match task's time limit; a pair that runs out, or whose
    worker died (Redis gives its message back once the worker stops renewing it,
    cardserver/broker_held.py), is played on (its matches resume from their logs) by the
    task sent again, up to TOURNAMENT_MAX_ATTEMPTS."""
    return sequential_pairs.sequential_pair_play(pair_id=pair_id)


def match_ended_handle(event: MatchChanged) -> None:
    """Record a tournament or ladder match that HTTP bots finished on the I/O pool.

    Subscribed to ``games.events`` in ``TournamentsConfig.ready()``. The task that plays a
    match records it itself when the match ends in its hands; a match with an HTTP bot
    goes on on the I/O pool after that task returned (``bots.play_to_end.match_play_to_end``),
    and its end is recorded here. Matches without an HTTP bot cost one query; with tasks
    run eagerly (the pool is not used then) nothing is done.
    """
    from bots.models import Bot
    from cardserver.celery import app
    from games.models import Seat
    from tournaments.models import LadderMatch, TournamentMatch

    if event.change != Change.FINISHED or app.conf.task_always_eager:
        return
    if not Seat.objects.filter(match_id=event.match_id, bot__kind=Bot.Kind.HTTP).exists():
        return
    tm_id = (
        TournamentMatch.objects.filter(match_id=event.match_id)
        .exclude(status__in=TournamentMatch.DONE)
        .values_list("pk", flat=True)
        .first()
    )
    if tm_id is not None:
        record_tournament_match.delay(tm_id)
    elif LadderMatch.objects.filter(match_id=event.match_id).exists():
        record_ladder_match.delay(event.match_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def record_tournament_match(tournament_match_id: int) -> str:
    """Record a tournament match that ended and move its tournament on (once)."""
    return services.tournament_match_record(tournament_match_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def record_ladder_match(match_id: int) -> None:
    """Apply a finished ladder match's rating and check its forfeits (once)."""
    ladder.ladder_match_record(match_id=match_id)
