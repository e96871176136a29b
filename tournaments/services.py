"""Actions on tournaments: starting, playing, recording, cancelling (creating one is
``tournaments.creation``, the ratings are in ``tournaments.ratings``, the ladder in
``tournaments.ladder``; how tasks are sent, in ``tournaments.dispatch``).

Each action is a function named ``<entity>_<action>`` with keyword-only, typed arguments,
and runs as one transaction (``tournament_match_play`` plays a match between two: see
its docstring). Celery tasks are sent only after the transaction that makes them
necessary commits, so a task never sees a row that a rollback took back, and every task
is safe to run twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from bots.models import Bot
from bots.play_to_end import match_play_to_end
from games.errors import MatchError
from games.events import Change, match_changed_announce
from games.models import DealGroup, Match
from games.sealing import (
    GroupDeal,
    deal_group_abandon,
    deal_group_create,
    deal_group_of,
    deal_groups_abandon,
)
from tournaments.backpressure import tournament_matches_dispatch
from tournaments.creation import TournamentError
from tournaments.dispatch import after_commit, inline_play, inline_playing, send_fit, send_round
from tournaments.models import Tournament, TournamentMatch
from tournaments.ratings import ratings_apply

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)


# --- Tournaments ------------------------------------------------------------------------


def tournament_start(*, tournament_id: int) -> Tournament:
    """Start a tournament that has not started: its first round goes to the workers."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status != Tournament.Status.DRAFT:
            raise TournamentError(f"the tournament is {tournament.get_status_display().lower()}")
        tournament.status = Tournament.Status.RUNNING
        tournament.started_at = timezone.now()
        tournament.current_round = 0
        tournament.save(update_fields=["status", "started_at", "current_round"])
        after_commit(tournament_matches_dispatch)
    return tournament


def tournament_cancel(*, tournament_id: int) -> Tournament:
    """Cancel a tournament: its unfinished matches are cancelled (and their games aborted).

    Cancelling a finished or cancelled tournament changes nothing.
    """
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            return tournament
        now = timezone.now()
        unfinished = TournamentMatch.objects.filter(tournament=tournament).exclude(
            status__in=TournamentMatch.DONE
        )
        matches_abort(
            match_ids=list(unfinished.exclude(match=None).values_list("match_id", flat=True)),
            reason="cancelled",
        )
        unfinished.update(status=TournamentMatch.Status.CANCELLED, finished_at=now)
        deal_groups_abandon(key_prefix=f"tournament:{tournament.pk}:round:")
        tournament.status = Tournament.Status.CANCELLED
        tournament.finished_at = now
        tournament.matches_done = tournament.matches_total
        tournament.save(update_fields=["status", "finished_at", "matches_done"])
        # Its slots are free for other tournaments' matches.
        after_commit(tournament_matches_dispatch)
    return tournament


def tournament_match_play(*, tournament_match_id: int) -> str:
    """Play one tournament match to its end and record it; return its status.

    Safe to call any number of times, at once or one after another: the first call
    creates the game match (once: the row is locked), every call resumes it from its move
    log, and only one records the result. A call counts an attempt only while the match
    is not yet created, so one whose creation kills the worker is given up after
    ``TOURNAMENT_MAX_ATTEMPTS`` starts; once it exists, a worker that dies playing it
    leaves a lapsed claim, which the bot driver counts (``BOTS_TURN_MAX_LAPSES``, then
    the arena aborts it, saying what failed). Call it outside any transaction.
    """
    try:
        match_id = _tournament_match_claim(tournament_match_id)
    except MatchError as exc:
        # The match cannot be created (say, an entrant was disabled since the start).
        return tournament_match_record(tournament_match_id, error=f"not created: {exc}")
    if match_id is _GIVE_UP:
        return tournament_match_record(
            tournament_match_id,
            error=f"gave up: the match could not be created in "
            f"{settings.TOURNAMENT_MAX_ATTEMPTS} starts (each worker died); no bot is at fault",
        )
    if match_id is None:
        return TournamentMatch.objects.values_list("status", flat=True).get(pk=tournament_match_id)
    try:
        match_play_to_end(match_id=match_id, pool=True)
    except Exception as exc:
        # A bug in a built-in player or the engine: give the match up rather than retry.
        logger.exception(
            "tournament match %s failed", tournament_match_id, extra={"match_id": match_id}
        )
        return tournament_match_record(tournament_match_id, error=repr(exc)[:500])
    return tournament_match_record(tournament_match_id)


def tournament_play_inline(
    *, tournament_id: int, progress: Callable[[int, int], None] | None = None
) -> None:
    """Start the tournament and play all its matches in this process, round by round.

    No task is sent to the workers (the command line, the demo arena, tests and
    benchmarks). ``progress(done, total)`` is called after each match.
    """
    with inline_play():
        tournament_start(tournament_id=tournament_id)
        ids = list(
            TournamentMatch.objects.filter(tournament_id=tournament_id)
            .order_by("round", "index")
            .values_list("pk", flat=True)
        )
        for done, tm_id in enumerate(ids, start=1):
            tournament_match_play(tournament_match_id=tm_id)
            if progress is not None:
                progress(done, len(ids))


_GIVE_UP = -1


def _tournament_match_claim(tournament_match_id: int) -> int | None:
    """Count an attempt and make sure the game match exists; return its id.

    Return None when there is nothing to play, and ``_GIVE_UP`` when the attempts are
    used up.
    """
    with transaction.atomic():
        tm = (
            TournamentMatch.objects.select_for_update(of=("self",))
            .select_related("tournament")
            .get(pk=tournament_match_id)
        )
        if tm.status in TournamentMatch.DONE:
            return None
        tournament = tm.tournament
        if tournament.status == Tournament.Status.CANCELLED:
            return None
        if tm.match_id is not None and tm.match.status != Match.Status.ACTIVE:
            # Ended by a call that died before it recorded the result, or aborted by the
            # arena (bots.leases.lease_claim): recorded as it is.
            return tm.match_id
        if tm.match_id is None:
            # A start counts only until the match exists: a start that dies after that
            # leaves a claim that lapses, counted by the bot driver (BOTS_TURN_MAX_LAPSES);
            # a match sent again while it waits in a queue resumes, and costs nothing.
            tm.attempts += 1
            if tm.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
                tm.save(update_fields=["attempts", "updated_at"])
                return _GIVE_UP
            tm.match = _tournament_game_create(tournament, tm)
        tm.status = TournamentMatch.Status.RUNNING
        tm.save(update_fields=["attempts", "match", "status", "updated_at"])
        return tm.match_id


def _tournament_game_create(tournament: Tournament, tm: TournamentMatch) -> Match:
    from games.seating import SeatHolder
    from games.services import match_create

    bots = Bot.objects.in_bulk(tm.table)
    options = {
        "creator": tournament.created_by,
        "game": tournament.game,
        "players": tournament.players,
        "deck_size": tournament.deck_size,
        "format": tournament.match_format,
        "seats": [SeatHolder(bot=bots[bot_id]) for bot_id in tm.table],
        "move_time_limit": tournament.move_time_limit,
        "dealer": 0,
        # This task plays the match itself: a turn notice would send a second worker to
        # wait for it.
        "notify": False,
        "by_arena": True,
    }
    if not tournament.duplicate:
        return match_create(**options, rated=tournament.rated)
    # A duplicate round is a deal group: every match of it deals deck 0 of the round's
    # seed and is sealed until the round's last match ends.
    group = deal_group_create(
        kind=DealGroup.Kind.DUPLICATE,
        key=_round_group_key(tournament.pk, tm.round),
        size=TournamentMatch.objects.filter(tournament=tournament, round=tm.round).count(),
    )
    deal = GroupDeal(group=group, number=0, copy=tm.index)
    return match_create(**options, rated=tournament.rated, deal=deal)


def _round_group_key(tournament_id: int, round_number: int) -> str:
    return f"tournament:{tournament_id}:round:{round_number}"


def _round_abandon(tournament_id: int, round_number: int) -> None:
    """A complete round deals no more: its group unseals once its matches have ended."""
    group_id = deal_group_of(_round_group_key(tournament_id, round_number))
    if group_id is not None:
        deal_group_abandon(group_id=group_id)


def tournament_match_record(tournament_match_id: int, *, error: str = "") -> str:
    """Record how a tournament match ended, and move the tournament on; return its status.

    Safe to call again (a match recorded already is left as it is): the task that played
    the match calls it, and so does ``tournaments.tasks.match_ended_handle`` for a match
    that HTTP bots finished on the I/O pool after that task returned.

    With ``error``, or when its attempts are used up, an unfinished match is aborted.
    """
    tournament_id = TournamentMatch.objects.values_list("tournament_id", flat=True).get(
        pk=tournament_match_id
    )
    with transaction.atomic():
        # Lock order: tournament, its match, then (to rate it) the pool.
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        tm = (
            TournamentMatch.objects.select_for_update(of=("self",))
            .select_related("match")
            .get(pk=tournament_match_id)
        )
        if tm.status in TournamentMatch.DONE:
            return tm.status
        game = tm.match
        if game is not None and game.status == Match.Status.FINISHED:
            tm.status = TournamentMatch.Status.FINISHED
            if game.rated:
                ratings_apply(match=game)
        elif game is not None and game.status == Match.Status.ABORTED:
            # The arena gave the game up; its reason says what failed.
            tm.status = TournamentMatch.Status.ABORTED
            tm.last_error = error or game.forfeit_reason or game.end_reason or "aborted"
        elif error or tm.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
            tm.status = TournamentMatch.Status.ABORTED
            tm.last_error = error or "gave up"
            if game is not None:
                matches_abort(match_ids=[game.pk], reason="aborted")
        else:
            # The match stopped short (waiting on a seat that no server-side bot holds):
            # leave it running for the watchdog.
            return tm.status
        tm.finished_at = timezone.now()
        tm.save(update_fields=["status", "last_error", "finished_at", "updated_at"])
        _tournament_advance(tournament, tm.round)
        return tm.status


def _tournament_advance(tournament: Tournament, finished_round: int) -> None:
    """Count a match done; start the next round, or finish, when the round is complete.

    Should be called holding a SELECT FOR UPDATE lock on ``tournament``, after the
    match's status was saved.
    """
    tournament.matches_done += 1
    tournament.save(update_fields=["matches_done"])
    # The match's slot is free (and a new round's matches may be waiting).
    after_commit(tournament_matches_dispatch)
    if tournament.status != Tournament.Status.RUNNING:
        return
    if tournament.current_round != finished_round:
        return
    tournament_id = tournament.pk
    open_matches = TournamentMatch.objects.filter(
        tournament_id=tournament_id, round=finished_round
    ).exclude(status__in=TournamentMatch.DONE)
    if open_matches.exists():
        return
    _round_abandon(tournament_id, finished_round)
    pool = tournament.pool
    if tournament.rated:
        after_commit(lambda: send_fit(pool))
    if finished_round + 1 >= tournament.rounds_total:
        tournament.status = Tournament.Status.FINISHED
        tournament.finished_at = timezone.now()
        tournament.save(update_fields=["status", "finished_at"])
        return
    tournament.current_round = finished_round + 1
    tournament.save(update_fields=["current_round"])


def matches_abort(*, match_ids: list[int], reason: str) -> None:
    """Abort unfinished game matches (no loser, no rating)."""
    if not match_ids:
        return
    unfinished = Match.objects.filter(
        pk__in=match_ids, status__in=[Match.Status.WAITING, Match.Status.ACTIVE]
    )
    aborted = list(unfinished.only("pk", "ply", "to_move"))
    unfinished.update(status=Match.Status.ABORTED, end_reason=reason, finished_at=timezone.now())
    for match in aborted:
        match.status = Match.Status.ABORTED
        match_changed_announce(match, Change.ABORTED)


def tournaments_watchdog(*, stale_after: float | None = None) -> list[int]:
    """Record the matches of running tournaments that ended unrecorded, and send again
    the pending matches of a current round that was never sent.

    A running match is never sent again for its time without a move: while a worker holds
    it, its claim is live; when the worker dies, its claim lapses and the sweep for lapsed
    claims hands the turn to another (``bots.tasks.resume_abandoned_turns``), which plays
    it to its end; a match with no claim waits in a queue, however long. What the
    watchdog does see is a running match whose game ended (finished, or aborted by the
    arena) while no task recorded it (its task died, or the game ended in another
    worker's hands): it records it now. A pending match counts as never sent after
    ``TOURNAMENT_STALE_AFTER`` seconds in its tournament's current round (a crash between
    commit and send); sending it twice costs no attempt (``tournament_match_play``).
    A given ``stale_after`` replaces that. Return the ids of the tournament matches
    recorded or sent.
    """
    now = timezone.now()
    pending_after = settings.TOURNAMENT_STALE_AFTER if stale_after is None else stale_after
    pending_cutoff = now - timedelta(seconds=pending_after)
    current = TournamentMatch.objects.filter(
        tournament__status=Tournament.Status.RUNNING, round=F("tournament__current_round")
    )
    ended = list(
        current.filter(
            status=TournamentMatch.Status.RUNNING,
            match__status__in=[Match.Status.FINISHED, Match.Status.ABORTED],
        )
        .order_by("index")
        .values_list("pk", flat=True)
    )
    for tm_id in ended:
        tournament_match_record(tm_id)
    # A pending match that was never sent waits for a slot (tournaments.backpressure).
    pending = list(
        current.filter(
            status=TournamentMatch.Status.PENDING,
            dispatched_at__isnull=False,
            updated_at__lte=pending_cutoff,
        )
        .order_by("index")
        .values_list("pk", flat=True)
    )
    if pending and not inline_playing():
        send_round(pending)
    return ended + pending
