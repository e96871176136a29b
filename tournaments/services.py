"""Actions on tournaments (the ratings are in ``tournaments.ratings``, the ladder in
``tournaments.ladder``; how tasks are sent, in ``tournaments.dispatch``).

Each action is a function named ``<entity>_<action>`` with keyword-only, typed arguments,
and runs as one transaction (``tournament_match_play`` plays a match between two: see
its docstring). Celery tasks are sent only after the transaction that makes them
necessary commits, so a task never sees a row that a rollback took back, and every task
is safe to run twice.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from bots.driver import match_play_to_end
from bots.models import Bot
from games.engine import load_game
from games.errors import InvalidMatchRequest, MatchError
from games.events import Change, match_changed_announce
from games.models import Match
from games.services import bot_seat_check
from tournaments.dispatch import after_commit, inline_play, inline_playing, send_fit, send_round
from tournaments.models import Entrant, Tournament, TournamentMatch
from tournaments.ratings import ratings_apply
from tournaments.schedule import build_schedule, check_options, cycles_of, duplicate_decks

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


class TournamentError(ValueError):
    """A tournament action that the tournament's state or options do not allow."""


# --- Tournaments ------------------------------------------------------------------------


def tournament_create(
    *,
    creator: User | None,
    name: str,
    game: str,
    players: int,
    bots: Sequence[Bot],
    deck_size: int | None = None,
    match_format: str = "deal",
    format: str = Tournament.Format.ROUND_ROBIN,
    games_per_pairing: int = 2,
    move_time_limit: float = 5.0,
    rated: bool = True,
    duplicate: bool = False,
    seed: str | None = None,
) -> Tournament:
    """Create a tournament and every match of its schedule (none started yet).

    Raise TournamentError when the options or the entrants do not make a tournament.
    ``creator`` None or staff is the arena, which may enter anyone's bot; anyone else
    enters only the bots they may seat in a match (their own and the built-in ones), rated
    or not: an entry spends the bot's calls, and its forfeits cost it its health.
    """
    if deck_size is None:
        deck_size = 32 if game == "volynshchik" else 36
    try:
        load_game(game, players=players, deck_size=deck_size)
        cycles_of(format)
        check_options(entrants=len(bots), players=players, games_per_pairing=games_per_pairing)
    except ValueError as exc:
        raise TournamentError(str(exc)) from None
    if match_format not in ("deal", "fool") or (match_format == "fool" and game != "durak"):
        raise TournamentError("a series to ДУРАК (format fool) is for Durak only")
    if duplicate and match_format != "deal":
        # games.services.match_create deals explicit decks to single deals only.
        raise TournamentError("duplicate deals are for single deals (match format deal) only")
    if len({bot.pk for bot in bots}) != len(bots):
        raise TournamentError("a bot can enter a tournament only once")
    for bot in bots:
        if game not in (bot.games or []):
            raise TournamentError(f"bot {bot.name} does not play {game}")
        if not bot.enabled:
            raise TournamentError(f"bot {bot.name} is disabled")
        if creator is not None and not creator.is_staff:
            try:
                bot_seat_check(bot=bot, user=creator)
            except InvalidMatchRequest as exc:
                raise TournamentError(str(exc)) from None
    if move_time_limit <= 0:
        raise TournamentError("the time limit per move must be positive")

    schedule = build_schedule(
        [bot.pk for bot in bots],
        players=players,
        games_per_pairing=games_per_pairing,
        format=format,
        duplicate=duplicate,
    )
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name,
            game=game,
            players=players,
            deck_size=deck_size,
            match_format=match_format,
            format=format,
            games_per_pairing=games_per_pairing,
            move_time_limit=move_time_limit,
            rated=rated,
            duplicate=duplicate,
            seed=seed or secrets.token_hex(16),
            rounds_total=max(m.round for m in schedule) + 1,
            matches_total=len(schedule),
            created_by=creator,
        )
        Entrant.objects.bulk_create(
            Entrant(tournament=tournament, bot=bot, order=order) for order, bot in enumerate(bots)
        )
        TournamentMatch.objects.bulk_create(
            (
                TournamentMatch(
                    tournament=tournament,
                    index=m.index,
                    round=m.round,
                    pairing=m.pairing,
                    rotation=m.rotation,
                    deck=m.deck,
                    table=list(m.table),
                )
                for m in schedule
            ),
            batch_size=1000,
        )
    return tournament


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
        ids = _round_match_ids(tournament.pk, 0)
        after_commit(lambda: send_round(ids))
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
        tournament.status = Tournament.Status.CANCELLED
        tournament.finished_at = now
        tournament.matches_done = tournament.matches_total
        tournament.save(update_fields=["status", "finished_at", "matches_done"])
    return tournament


def tournament_match_play(*, tournament_match_id: int) -> str:
    """Play one tournament match to its end and record it; return its status.

    Safe to call any number of times, at once or one after another: the first call
    creates the game match (once: the row is locked), every call resumes it from its move
    log, and only one records the result. Each call counts an attempt first, in its own
    transaction, so a match whose play kills the worker is given up (aborted) after
    ``TOURNAMENT_MAX_ATTEMPTS`` starts. Call it outside any transaction.
    """
    try:
        match_id = _tournament_match_claim(tournament_match_id)
    except MatchError as exc:
        # The match cannot be created (say, an entrant was disabled since the start).
        return tournament_match_record(tournament_match_id, error=f"not created: {exc}")
    if match_id is _GIVE_UP:
        return tournament_match_record(
            tournament_match_id,
            error=f"gave up after {settings.TOURNAMENT_MAX_ATTEMPTS} attempts",
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
        if tm.match_id is not None and tm.match.status == Match.Status.FINISHED:
            # Finished by a call that died before it recorded the result.
            return tm.match_id
        tm.attempts += 1
        if tm.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
            tm.save(update_fields=["attempts", "updated_at"])
            return _GIVE_UP
        if tm.match_id is None:
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
    # The decks come from the tournament's secret seed, as fair as a match's own seed.
    decks = duplicate_decks(
        tournament.seed,
        tm.deck,
        deck_size=tournament.deck_size,
        match_format=tournament.match_format,
        players=tournament.players,
    )
    return match_create(**options, rated=tournament.rated, decks=decks, decks_trusted=True)


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
    ids = _round_match_ids(tournament_id, tournament.current_round)
    after_commit(lambda: send_round(ids))


def _round_match_ids(tournament_id: int, round_number: int) -> list[int]:
    return list(
        TournamentMatch.objects.filter(tournament_id=tournament_id, round=round_number)
        .exclude(status__in=TournamentMatch.DONE)
        .order_by("index")
        .values_list("pk", flat=True)
    )


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
    """Send again the matches of running tournaments that no worker is playing.

    A running match counts as abandoned when no bot driver holds a live claim on it and
    it has had no move for ``TOURNAMENT_ABANDONED_AFTER`` seconds: a driver renews its
    claim while it plays (``bots.driver``), so a driver that died lets go within seconds.
    A pending match counts as abandoned after ``TOURNAMENT_STALE_AFTER`` seconds in its
    tournament's current round (the round was never sent: a crash between commit and
    send); longer, because a pending match may wait its turn behind a long queue. A
    given ``stale_after`` replaces both. Return the ids of the tournament matches sent.
    """
    from bots.selectors import matches_claimed

    now = timezone.now()
    running_after = settings.TOURNAMENT_ABANDONED_AFTER if stale_after is None else stale_after
    pending_after = settings.TOURNAMENT_STALE_AFTER if stale_after is None else stale_after
    running_cutoff = now - timedelta(seconds=running_after)
    pending_cutoff = now - timedelta(seconds=pending_after)
    current = TournamentMatch.objects.filter(
        tournament__status=Tournament.Status.RUNNING, round=F("tournament__current_round")
    )
    pending = Q(status=TournamentMatch.Status.PENDING, updated_at__lte=pending_cutoff)
    running = (
        Q(status=TournamentMatch.Status.RUNNING, updated_at__lte=running_cutoff)
        & (
            Q(match=None)
            | Q(match__turn_started_at=None)
            | Q(match__turn_started_at__lte=running_cutoff)
        )
        & ~Q(match_id__in=matches_claimed(now=now))
    )
    candidates = current.filter(pending | running)
    ids = list(candidates.order_by("index").values_list("pk", flat=True))
    if ids and not inline_playing():
        send_round(ids)
    return ids
