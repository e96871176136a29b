"""Actions on tournaments, ratings and the ladder.

Each action is a function named ``<entity>_<action>`` with keyword-only, typed arguments,
and runs as one transaction (``tournament_match_play`` and ``ladder_match_play`` play a
match between two: see their docstrings). Celery tasks are sent only after the
transaction that makes them necessary commits, so a task never sees a row that a
rollback took back, and every task is safe to run twice.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max, Q, QuerySet
from django.utils import timezone

from bots.models import Bot
from games.engine import load_game
from games.engine.cards import shuffled_deck
from games.errors import MatchError
from games.events import Change, match_changed_announce
from games.models import Match, Seat
from tournaments import elo
from tournaments.bradley_terry import fit_ratings
from tournaments.models import (
    POOLS,
    Entrant,
    FitEntry,
    LadderMatch,
    LadderPause,
    RatedMatch,
    Rating,
    RatingChange,
    RatingFit,
    RatingPool,
    Tournament,
    TournamentMatch,
    pool_of,
)
from tournaments.schedule import build_schedule, check_options, cycles_of, deck_seed

logger = logging.getLogger(__name__)


class TournamentError(ValueError):
    """A tournament action that the tournament's state or options do not allow."""


# --- Dispatch ---------------------------------------------------------------------------

# Set while a management command plays a tournament in its own process: then the services
# send no Celery task, and the caller plays the matches itself.
_INLINE: ContextVar[bool] = ContextVar("tournaments_inline", default=False)


@contextmanager
def inline_play():
    """Within this block, send no Celery task: the caller plays every match itself."""
    token = _INLINE.set(True)
    try:
        yield
    finally:
        _INLINE.reset(token)


def _after_commit(send: Callable[[], None]) -> None:
    if not _INLINE.get():
        transaction.on_commit(send)


def _send_round(match_ids: list[int]) -> None:
    from celery import group

    from tournaments.tasks import play_tournament_match

    if match_ids:
        group(play_tournament_match.s(match_id) for match_id in match_ids).apply_async()


def _send_fit(pool: str) -> None:
    from tournaments.tasks import fit_pool_ratings

    fit_pool_ratings.delay(pool)


# --- Tournaments ------------------------------------------------------------------------


def tournament_create(
    *,
    creator,
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
        _after_commit(lambda: _send_round(ids))
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
        _matches_abort(
            list(unfinished.exclude(match=None).values_list("match_id", flat=True)),
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
        return _tournament_match_record(tournament_match_id, error=f"not created: {exc}")
    if match_id is _GIVE_UP:
        return _tournament_match_record(
            tournament_match_id,
            error=f"gave up after {settings.TOURNAMENT_MAX_ATTEMPTS} attempts",
        )
    if match_id is None:
        return TournamentMatch.objects.values_list("status", flat=True).get(pk=tournament_match_id)
    try:
        match_play_to_end(match_id=match_id)
    except Exception as exc:
        # A bug in a built-in player or the engine: give the match up rather than retry.
        logger.exception(
            "tournament match %s failed", tournament_match_id, extra={"match_id": match_id}
        )
        return _tournament_match_record(tournament_match_id, error=repr(exc)[:500])
    return _tournament_match_record(tournament_match_id)


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


def match_play_to_end(*, match_id: int, poll: float = 0.2) -> str:
    """Play a match of server-side bots until it ends; return its status.

    ``bot_turns_play`` returns at once when another call holds the match's claim: a
    duplicate task, or a worker that died holding it. Then wait and try again, for as
    long as the match makes progress, or until the dead worker's claim lapses; give up
    (and return "active") when nothing moved for longer than any claim lasts. Call it
    outside any transaction.
    """
    from bots import services as bot_services

    match = Match.objects.only("move_time_limit").get(pk=match_id)
    patience = (
        max(bot_services.BUILTIN_LEASE, match.move_time_limit + bot_services.LEASE_GRACE) + 5.0
    )
    last_ply = None
    moved_at = time.monotonic()
    while True:
        bot_services.bot_turns_play(match_id=match_id)
        status, ply = Match.objects.values_list("status", "ply").get(pk=match_id)
        if status != Match.Status.ACTIVE:
            return status
        if ply != last_ply:
            last_ply, moved_at = ply, time.monotonic()
        elif time.monotonic() - moved_at > patience:
            return status
        time.sleep(poll)


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
    from games.services import match_create

    bots = Bot.objects.in_bulk(tm.table)
    options = {
        "creator": tournament.created_by,
        "game": tournament.game,
        "players": tournament.players,
        "deck_size": tournament.deck_size,
        "format": tournament.match_format,
        "seats": [{"bot": bots[bot_id]} for bot_id in tm.table],
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
    decks = _duplicate_decks(tournament, tm.deck)
    return match_create(**options, rated=tournament.rated, decks=decks, decks_trusted=True)


def _duplicate_decks(tournament: Tournament, deck: int) -> list[list[str]]:
    """Return the deck order(s) of duplicate deck number ``deck`` of the tournament.

    A series to ДУРАК needs a deck per deal: enough for the longest series (every player
    one letter short of the word, then a loser, plus room for drawn deals).
    """
    seed = deck_seed(tournament.seed, deck)
    if tournament.match_format == "deal":
        return [shuffled_deck(seed, tournament.deck_size)]
    deals = 4 * tournament.players + 1 + 16
    return [shuffled_deck(f"{seed}:{n}", tournament.deck_size) for n in range(deals)]


def _tournament_match_record(tournament_match_id: int, *, error: str = "") -> str:
    """Record how a tournament match ended, and move the tournament on; return its status.

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
                _ratings_apply(game)
        elif error or tm.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
            tm.status = TournamentMatch.Status.ABORTED
            tm.last_error = error or "gave up"
            if game is not None:
                _matches_abort([game.pk], reason="aborted")
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
        _after_commit(lambda: _send_fit(pool))
    if finished_round + 1 >= tournament.rounds_total:
        tournament.status = Tournament.Status.FINISHED
        tournament.finished_at = timezone.now()
        tournament.save(update_fields=["status", "finished_at"])
        return
    tournament.current_round = finished_round + 1
    tournament.save(update_fields=["current_round"])
    ids = _round_match_ids(tournament_id, tournament.current_round)
    _after_commit(lambda: _send_round(ids))


def _round_match_ids(tournament_id: int, round_number: int) -> list[int]:
    return list(
        TournamentMatch.objects.filter(tournament_id=tournament_id, round=round_number)
        .exclude(status__in=TournamentMatch.DONE)
        .order_by("index")
        .values_list("pk", flat=True)
    )


def _matches_abort(match_ids: list[int], *, reason: str) -> None:
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

    A match counts as abandoned when it is running with no move for ``stale_after``
    seconds (default ``TOURNAMENT_STALE_AFTER``), or pending in its tournament's current
    round for that long (the round was never sent: a crash between commit and send).
    Return the ids of the tournament matches sent.
    """
    if stale_after is None:
        stale_after = settings.TOURNAMENT_STALE_AFTER
    cutoff = timezone.now() - timedelta(seconds=stale_after)
    candidates = TournamentMatch.objects.filter(
        tournament__status=Tournament.Status.RUNNING,
        round=F("tournament__current_round"),
        status__in=[TournamentMatch.Status.PENDING, TournamentMatch.Status.RUNNING],
        updated_at__lte=cutoff,
    ).filter(Q(match=None) | Q(match__turn_started_at=None) | Q(match__turn_started_at__lte=cutoff))
    ids = list(candidates.order_by("index").values_list("pk", flat=True))
    if ids and not _INLINE.get():
        _send_round(ids)
    return ids


# --- Ratings: Elo, exactly once ---------------------------------------------------------


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
        return _ratings_apply(match)


def _ratings_apply(match: Match) -> RatedMatch:
    """Should be called inside a transaction; locks the match's pool until it commits."""
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
    game, players = _pool_game(pool)
    matches = Match.objects.filter(
        game=game, rated=True, status=Match.Status.FINISHED, rating_applied=False
    )
    return matches if players is None else matches.filter(players=players)


def _pool_game(pool: str) -> tuple[str, int | None]:
    if pool.startswith("durak-"):
        return "durak", int(pool.removeprefix("durak-").removesuffix("p"))
    return pool, None


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


def pool_results(pool: str) -> tuple[list[list[int]], list[int | None], int]:
    """Return the tables and losers of every rated match applied to the pool, in order.

    Also return the ledger sequence of the last one.
    """
    tables: list[list[int]] = []
    losers: list[int | None] = []
    last = None
    current = None
    for match_id, seat, bot_id, lost in (
        RatingChange.objects.filter(pool=pool)
        .order_by("sequence", "seat")
        .values_list("match_id", "seat", "bot_id", "lost")
        .iterator(chunk_size=20000)
    ):
        if match_id != current:
            current = match_id
            tables.append([])
            losers.append(None)
        tables[-1].append(bot_id)
        if lost:
            losers[-1] = seat
    last = RatedMatch.objects.filter(pool=pool).aggregate(last=Max("sequence"))["last"] or 0
    return tables, losers, last


def ratings_fit(
    *, pool: str, bootstraps: int | None = None, force: bool = False
) -> RatingFit | None:
    """Fit the pool's ratings over all its rated results and store the fit (the leaderboard).

    Return None when nothing was applied since the newest fit (the fit would be the same),
    unless ``force``.
    """
    tables, losers, last = pool_results(pool)
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


# --- The ladder -------------------------------------------------------------------------


def ladder_tick(*, tables_per_pool: int | None = None) -> list[int]:
    """Start rated ladder matches among healthy, enabled bots; return the new match ids.

    For each table shape in ``LADDER_TABLES`` start up to ``LADDER_TABLES_PER_TICK``
    tables while fewer than ``LADDER_MAX_ACTIVE`` ladder matches are unfinished. A table
    starts from the eligible bot with the fewest games in the pool and adds the bots
    whose ratings are closest to its own; no two bots of one owner sit at a table
    (built-in bots, which the arena itself runs, are exempt), and a bot plays one ladder
    match at a time.
    """
    if tables_per_pool is None:
        tables_per_pool = settings.LADDER_TABLES_PER_TICK
    created: list[int] = []
    unfinished = LadderMatch.objects.filter(
        match__status__in=[Match.Status.WAITING, Match.Status.ACTIVE]
    )
    active = unfinished.count()
    # A bot plays one ladder match at a time.
    busy = set(
        Seat.objects.filter(match__ladder_entry__in=unfinished).values_list("bot_id", flat=True)
    )
    for game, players in settings.LADDER_TABLES:
        for _ in range(tables_per_pool):
            if active >= settings.LADDER_MAX_ACTIVE:
                return created
            table = _ladder_table(game, players, busy)
            if table is None:
                break
            created.append(_ladder_match_create(game, players, table))
            busy.update(bot.pk for bot in table)
            active += 1
    return created


def _ladder_table(game: str, players: int, busy: set[int]) -> list[Bot] | None:
    from tournaments.selectors import pool_ratings

    pool = pool_of(game, players)
    bots = [
        bot
        for bot in Bot.objects.filter(enabled=True, healthy=True, ladder_pause=None)
        .exclude(kind=Bot.Kind.CLIENT)
        .order_by("pk")
        if game in (bot.games or []) and bot.pk not in busy
    ]
    if len(bots) < players:
        return None
    ratings = pool_ratings(pool)
    games = dict(Rating.objects.filter(pool=pool).values_list("bot_id", "games"))
    return choose_table(
        [(bot, ratings.get(bot.pk, elo.INITIAL_RATING), games.get(bot.pk, 0)) for bot in bots],
        players,
    )


def choose_table(candidates: Iterable[tuple[Bot, float, int]], players: int) -> list[Bot] | None:
    """Return a table: the bot with fewest games, then the closest-rated compatible bots."""
    candidates = sorted(candidates, key=lambda c: (c[2], c[0].pk))
    if len(candidates) < players:
        return None
    first, rating, _ = candidates[0]
    table = [first]
    for bot, _rating, _ in sorted(candidates[1:], key=lambda c: (abs(c[1] - rating), c[2])):
        if len(table) == players:
            break
        if any(_same_owner(bot, seated) for seated in table):
            continue
        table.append(bot)
    return table if len(table) == players else None


def _same_owner(a: Bot, b: Bot) -> bool:
    if a.kind == Bot.Kind.BUILTIN and b.kind == Bot.Kind.BUILTIN:
        return False
    return a.owner_id == b.owner_id


def _ladder_match_create(game: str, players: int, table: list[Bot]) -> int:
    from games.services import match_create

    order = list(table)
    secrets.SystemRandom().shuffle(order)
    with transaction.atomic():
        match = match_create(
            creator=None,
            game=game,
            players=players,
            deck_size=36 if game == "durak" else 32,
            format="deal",
            seats=[{"bot": bot} for bot in order],
            move_time_limit=settings.BOTS_DEFAULT_MOVE_TIME_LIMIT,
            rated=True,
            notify=False,  # play_ladder_match plays it
            by_arena=True,
        )
        LadderMatch.objects.create(match=match, pool=pool_of(game, players))
        match_id = match.pk

        def send() -> None:
            from tournaments.tasks import play_ladder_match

            play_ladder_match.delay(match_id)

        _after_commit(send)
    return match_id


def ladder_match_play(*, match_id: int) -> str:
    """Play a ladder match to its end, apply its rating, pause a bot that keeps forfeiting.

    Safe to call again: the match resumes from its move log, the rating applies once.
    Each call counts an attempt; past ``TOURNAMENT_MAX_ATTEMPTS`` the match is aborted
    (a match whose play kills the worker does not come back for ever). Call it outside
    any transaction. Return the match's status.
    """
    with transaction.atomic():
        entry = LadderMatch.objects.select_for_update().filter(match_id=match_id).first()
        if entry is not None:
            entry.attempts += 1
            entry.save(update_fields=["attempts"])
            if entry.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
                _matches_abort([match_id], reason="aborted")
    match_play_to_end(match_id=match_id)
    match = Match.objects.get(pk=match_id)
    if match.status == Match.Status.FINISHED:
        ratings_apply_match(match_id=match_id)
        if match.forfeit_seat is not None:
            ladder_forfeits_check(match_id=match_id)
    return match.status


def ladder_forfeits_check(*, match_id: int) -> LadderPause | None:
    """Pause the bot that forfeited this match if its last rated matches were all forfeits."""
    match = Match.objects.get(pk=match_id)
    seat = Seat.objects.filter(match_id=match_id, index=match.forfeit_seat).first()
    if seat is None or seat.bot_id is None:
        return None
    limit = settings.LADDER_PAUSE_AFTER_FORFEITS
    recent = list(
        Seat.objects.filter(
            bot_id=seat.bot_id, match__rated=True, match__status=Match.Status.FINISHED
        )
        .order_by("-match__finished_at", "-match_id")
        .values_list("index", "match__forfeit_seat")[:limit]
    )
    if len(recent) < limit or any(index != forfeit for index, forfeit in recent):
        return None
    with transaction.atomic():
        try:
            with transaction.atomic():
                return LadderPause.objects.create(
                    bot_id=seat.bot_id, reason=f"forfeited its last {limit} rated matches"
                )
        except IntegrityError:
            return LadderPause.objects.get(bot_id=seat.bot_id)
