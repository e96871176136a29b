"""The bot-turn driver: the arena plays the moves of its built-in and HTTP bots.

``bots`` subscribes to ``games``' announcement that a match changed (``bots.apps``); when
the seat to move is one the arena drives, ``bots.tasks.match_turn_started`` runs
``bot_turns_play`` for the match. ``match_play_to_end`` plays a match of server-side bots
to its end (tournaments, the ladder).

A match is claimed (``BotTurnLease``) by the driver playing it; the claim lapses if the
driver dies, so another one can take the match up from its move log.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from bots.models import Bot, BotTurnLease
from bots.protocol import Fault
from bots.services import bot_health_record
from cardserver.sql import RowQuery
from games.errors import IdempotencyKeyReused, MatchNotActive, NotYourTurn, StalePly

logger = logging.getLogger(__name__)

# Seconds a claim on a match outlasts the time its bot to move may take: enough to
# record the move or the forfeit after the call. A built-in bot decides in well under a
# second; its driver renews the claim whenever half of it has passed, so a driver that
# died lets go of its match within BUILTIN_LEASE seconds (the tournament watchdog and
# the clock's sweep then hand the match to another).
LEASE_GRACE = 5.0
BUILTIN_LEASE = 10.0

# The matches this thread is playing right now. A move's commit may start the driver
# again for the same match (``bots.tasks.match_turn_started`` run eagerly); that inner
# call returns at once and the loop already running plays on, so a long match does not
# become deep recursion.
_PLAYING: ContextVar[frozenset[int]] = ContextVar("bot_turns_playing", default=frozenset())


@dataclass(frozen=True, slots=True)
class BotTurn:
    """A server-side bot's turn: everything needed to ask it for its move."""

    match_id: int
    game: str
    options: dict
    seed: str
    seat: int
    ply: int
    bot: Bot
    # The match's state before this move.
    state: Any
    # Seconds an HTTP bot has, counted from its request sent.
    move_time_limit: float


def bot_turns_play(
    *, match_id: int, max_moves: int | None = None, pool: bool = False, holder: str = ""
) -> int:
    """Play the match's moves for its built-in and HTTP bots, one after another.

    Stop when the match is not active, when a person or a client bot is to move, after
    ``max_moves`` moves, or when a bot forfeits; return the number of moves played. A
    built-in bot chooses with a generator seeded from the match's seed, seat and ply, so
    an archived match replays exactly. An HTTP bot is given the match's whole move time
    limit, counted from the moment its request is sent (``bots.calls``); a fault
    (timeout, bad answer, illegal move, ...) forfeits the match for its seat with the
    fault as the reason and counts against the bot's health, and a good move clears the
    bot's failures.

    With ``pool`` (the Celery tasks pass it), an HTTP bot's call is handed to the I/O pool
    (``BOTS_CALL_QUEUE``) instead of made here, and this call stops: the pool records
    the answer and plays on (``http_turns_play``, with the claim's ``holder``). Without
    it, or with tasks run eagerly, the call is made in this thread.

    Built-in players' moves in a row are decided in memory and appended together, up to
    ``BOTS_BUILTIN_MOVES_PER_WRITE`` at a time (``games.play.match_moves_append``):
    the log still grows during a long match, so a match whose worker died resumes from
    it and spectators see it move.

    The match is claimed (``BotTurnLease``) before the first bot is asked and kept until
    this call stops. A call that finds the match claimed by another one still playing,
    or its turn already played, stops at once and returns 0: so return does not always
    mean that no bot is to move, but that another call is playing those moves.

    Call it outside any transaction: it may wait on bots over HTTP, and each write is its
    own transaction.
    """
    return _play(match_id, max_moves=max_moves, pool=pool, holder=holder).played


def http_turns_play(*, match: Any, holder: str) -> Driver:
    """Play on after an HTTP bot's answer, in the I/O pool, with the answer's claim: hand
    the next HTTP bot's call to the pool; stop at a person's or a client bot's turn, or
    at a built-in bot's. Return the driver: whether a built-in bot is to move
    (``builtin_next``: a CPU worker plays it, ``bots.tasks.play_bot_turns``), and the
    owner of the call handed to the pool (``calling_owner``). ``match`` is the row as the
    answer's move left it (``games.play.match_moves_append``).

    Call it in the transaction of that move, whose claim has not been checked yet: the
    claim's last write here (moved on to the next call, or let go) must find it held by
    ``holder``, else ClaimLost is raised, so that the caller's rollback undoes the move.
    """
    driver = Driver(holder=holder, claimed=True, builtin=False, match=match, claim_unchecked=True)
    return _drive(driver, match.pk, max_moves=None, pool=True)


class ClaimLost(Exception):
    """The match's claim is no longer the driver's (it lapsed and another driver took it):
    what the driver did in this transaction must be undone."""


def _play(
    match_id: int,
    *,
    max_moves: int | None,
    pool: bool,
    holder: str,
    builtin: bool = True,
    match: Any = None,
) -> Driver:
    driver = Driver(
        holder=holder or secrets.token_hex(16), claimed=bool(holder), builtin=builtin, match=match
    )
    return _drive(driver, match_id, max_moves=max_moves, pool=pool)


def _drive(driver: Driver, match_id: int, *, max_moves: int | None, pool: bool) -> Driver:
    # bots.calls builds on this module: imported here, not at the top.
    from bots import calls

    driver.pool = pool and calls.pool_enabled()
    playing = _PLAYING.get()
    if match_id in playing:
        return driver
    token = _PLAYING.set(playing | {match_id})
    played = 0
    stopped = False
    try:
        while max_moves is None or played < max_moves:
            limit = None if max_moves is None else max_moves - played
            moved = _bot_turns_step(match_id, driver, limit=limit)
            if not moved:
                break
            played += moved
        stopped = True
    finally:
        _PLAYING.reset(token)
        driver.played = played
        # A call handed to the I/O pool keeps the claim: its answer plays on with it.
        if driver.claimed and not driver.handed_off:
            released = lease_release(match_id, driver.holder)
            if stopped and driver.claim_unchecked and not released:
                raise ClaimLost(match_id)
    return driver


@dataclass(slots=True)
class Driver:
    """One call of ``bot_turns_play``: its claim's id, whether it claimed the match, and
    the bots at the match's seats (fixed once a match has started)."""

    holder: str
    claimed: bool = False
    seat_bots: dict[int, Bot] | None = None
    # When this driver's claim lapses, by its own clock (time.monotonic()).
    claimed_until: float = 0.0
    # Whether HTTP bots' calls go to the I/O pool, and whether one went (the claim with it).
    pool: bool = False
    handed_off: bool = False
    # The owner of the call handed to the pool and counted against its share, if one was.
    calling_owner: int | None = None
    played: int = 0
    # Whether built-in bots' moves are played here; when not, whether one is to move.
    builtin: bool = True
    builtin_next: bool = False
    # The match's row as the caller left it, read instead of the database at the first step.
    match: Any = None
    # Whether the claim, though the driver's own, has yet to be found held in this
    # transaction (``http_turns_play``).
    claim_unchecked: bool = False


def _bot_turns_step(match_id: int, driver: Driver, *, limit: int | None) -> int:
    """Play the next bot move of the match, or its built-in players' moves in a row (at
    most ``limit``); return how many moves were made."""
    turn = _bot_turn_load(match_id, driver)
    if turn is None:
        return 0
    if turn.bot.kind == Bot.Kind.BUILTIN:
        if not driver.builtin:
            driver.builtin_next = True
            return 0
        if not lease_claim(turn, driver, hold_for=BUILTIN_LEASE, keep_if_left=BUILTIN_LEASE / 2):
            return 0
        return _builtin_moves_play(turn, driver, limit=limit)
    from bots import calls

    return calls.http_turn_play(turn, driver)


def _builtin_moves_play(turn: BotTurn, driver: Driver, *, limit: int | None) -> int:
    """Play the built-in players' moves from ``turn`` on while a built-in bot is to move (at
    most ``limit``), appending them ``BOTS_BUILTIN_MOVES_PER_WRITE`` at a time; return
    how many were played.

    The state stays in memory from one write to the next: only this driver, holding the
    match's claim, moves in it meanwhile (a person cannot: no person's seat is to move).
    """
    from games.play import match_moves_append

    played = 0
    per_write = settings.BOTS_BUILTIN_MOVES_PER_WRITE
    while True:
        batch = per_write if limit is None else min(per_write, limit - played)
        moves, after, refused = _builtin_moves_decide(turn, driver, batch)
        if moves:
            try:
                match_moves_append(match_id=turn.match_id, ply=turn.ply, moves=moves)
            except TURN_GONE:
                return played
            played += len(moves)
        if refused is not None:
            _bot_forfeit(refused[0], code=Fault.ILLEGAL_MOVE, detail=str(refused[1]))
            return played
        if after.is_over or (limit is not None and played >= limit):
            return played
        bot = driver.seat_bots.get(after.to_move)
        if bot is None or bot.kind != Bot.Kind.BUILTIN:
            return played
        turn = replace(turn, seat=after.to_move, ply=turn.ply + len(moves), bot=bot, state=after)
        if not lease_claim(turn, driver, hold_for=BUILTIN_LEASE, keep_if_left=BUILTIN_LEASE / 2):
            return played


def _builtin_moves_decide(turn: BotTurn, driver: Driver, count: int):
    """Decide up to ``count`` built-in moves in a row from ``turn``, in memory.

    Return the moves, the state after them, and (the turn, the engine's error) if a
    built-in player chose a move the engine refused, else None.
    """
    from bots.builtin import decision_rng, get_player
    from games.engine import IllegalMove
    from games.play import ArenaMove

    state, ply, bot = turn.state, turn.ply, turn.bot
    moves: list[ArenaMove] = []
    while True:
        seat = state.to_move
        player = get_player(bot.builtin, turn.game)
        # The ply counts the match's moves (across the deals of a series), so every
        # decision of a match has a generator of its own.
        move = player.choose(
            state.view(seat), state.legal_moves(), decision_rng(turn.seed, seat, ply)
        )
        try:
            after = state.play(move)
        except IllegalMove as exc:
            # A bug in a built-in player: its seat forfeits, as an HTTP bot's would.
            refused = replace(turn, seat=seat, ply=ply, bot=bot, state=state)
            return moves, state, (refused, exc)
        state = after
        moves.append(ArenaMove(seat, move, timezone.now(), bot_move_key(bot.pk, ply)))
        ply += 1
        if state.is_over or len(moves) >= count:
            return moves, state, None
        bot = driver.seat_bots.get(state.to_move)
        if bot is None or bot.kind != Bot.Kind.BUILTIN:
            return moves, state, None


# What a move meets when another worker played the turn, or the match ended meanwhile
# (on time, say): the driver stops without a fault.
TURN_GONE = (StalePly, NotYourTurn, MatchNotActive, IdempotencyKeyReused)


def bot_move_key(bot_id: int, ply: int) -> str:
    return f"bot:{bot_id}:{ply}"


def _bot_turn_load(match_id: int, driver: Driver) -> BotTurn | None:
    """Return the turn of the bot to move, or None when no server-side bot is to move."""
    from games.models import Match
    from games.rows import match_row
    from games.selectors import match_state

    match, driver.match = driver.match, None
    if match is None:
        match = match_row(match_id)
    if match is None or match.status != Match.Status.ACTIVE:
        return None
    if driver.seat_bots is None:
        # The I/O pool plays a match's HTTP turns one call at a time, each its own driver.
        driver.seat_bots = _seat_bots(match_id, recent=not driver.builtin)
    bot = driver.seat_bots.get(match.to_move)
    if bot is None or not bot.played_by_arena:
        return None
    state = match_state(match)
    if state.is_over or state.to_move != match.to_move:
        return None
    options = {"players": match.players, "deck_size": match.deck_size}
    if match.game == "durak":
        options["format"] = match.format
    return BotTurn(
        match_id=match.pk,
        game=match.game,
        options=options,
        # Matches dealt from explicit decks have no seed; their decisions are seeded by
        # the match's id, which is as fixed.
        seed=match.seed or f"match-{match.pk}",
        seat=match.to_move,
        ply=match.ply,
        bot=bot,
        state=state,
        move_time_limit=match.move_time_limit or settings.BOTS_DEFAULT_MOVE_TIME_LIMIT,
    )


# The seats' bots of the matches the I/O pool plays, kept for SEAT_BOTS_KEPT seconds: a
# match's seats are fixed once it started, and reading them costs more of the pool's CPU
# than anything else of a turn. A bot's new URL or secret reaches its matches as late.
SEAT_BOTS_KEPT = 5.0
_SEAT_BOTS: OrderedDict[int, tuple[float, dict]] = OrderedDict()
_SEAT_BOTS_LOCK = threading.Lock()


def _seat_bots(match_id: int, *, recent: bool) -> dict[int, Bot]:
    """Return the bot of each seat of the match that a bot holds; with ``recent``, as read
    within the last SEAT_BOTS_KEPT seconds."""
    now = time.monotonic()
    if recent:
        with _SEAT_BOTS_LOCK:
            kept = _SEAT_BOTS.get(match_id)
            if kept is not None and kept[0] > now:
                return kept[1]
    seat_bots = {bot.seat_index: bot for bot in _seat_bots_query().all([match_id])}
    if recent:
        with _SEAT_BOTS_LOCK:
            _SEAT_BOTS[match_id] = (now + SEAT_BOTS_KEPT, seat_bots)
            _SEAT_BOTS.move_to_end(match_id)
            while len(_SEAT_BOTS) > 10_000 or next(iter(_SEAT_BOTS.values()))[0] <= now:
                _SEAT_BOTS.popitem(last=False)
    return seat_bots


_SEAT_BOTS_QUERY: RowQuery | None = None


def _seat_bots_query() -> RowQuery:
    """The seats' bots in one precompiled statement: a match's bots are read again every
    SEAT_BOTS_KEPT seconds, more often than a pool's turns come back to the match when
    it is busy, and the ORM's compiling of that query was a sixth of the I/O pool's CPU."""
    global _SEAT_BOTS_QUERY
    if _SEAT_BOTS_QUERY is None:
        from games.models import Seat

        seat = Seat._meta.db_table
        _SEAT_BOTS_QUERY = RowQuery(
            Bot,
            f"JOIN {seat} s ON s.bot_id = {{table}}.id WHERE s.match_id = %s",
            annotations={"seat_index": 's."index"'},
        )
    return _SEAT_BOTS_QUERY


def lease_claim(
    turn: BotTurn, driver: Driver, *, hold_for: float, keep_if_left: float | None = None
) -> bool:
    """Claim (or keep) the match for ``driver`` for ``hold_for`` seconds; return False
    when another driver holds it.

    A claim of the driver's own that lasts ``keep_if_left`` seconds more is kept as it
    is: a driver playing built-in moves in quick succession need not write at each batch.
    """
    left = driver.claimed_until - time.monotonic()
    if driver.claimed and keep_if_left is not None and left > keep_if_left:
        return True
    started = time.monotonic()
    now = timezone.now()
    expires_at = now + timedelta(seconds=hold_for)
    holder = driver.holder
    with transaction.atomic():
        taken = (
            BotTurnLease.objects.filter(match_id=turn.match_id)
            .filter(Q(holder=holder) | Q(expires_at__lte=now))
            .update(holder=holder, ply=turn.ply, expires_at=expires_at)
        )
        if not taken:
            if BotTurnLease.objects.filter(match_id=turn.match_id).exists():
                return False
            try:
                with transaction.atomic():
                    BotTurnLease.objects.create(
                        match_id=turn.match_id,
                        holder=holder,
                        ply=turn.ply,
                        expires_at=expires_at,
                    )
            except IntegrityError:
                return False
    driver.claimed = True
    driver.claimed_until = started + hold_for
    return True


def lease_release(match_id: int, holder: str) -> bool:
    """Let go of the match, if ``holder`` holds it, so the next driver need not wait;
    return whether it held it."""
    # Inside the pool's transaction of an answer, a savepoint would cost two round trips
    # and spare nothing: an error here undoes that transaction all the same.
    with transaction.atomic(savepoint=False):
        deleted, _ = BotTurnLease.objects.filter(match_id=match_id, holder=holder).delete()
    return bool(deleted)


def _bot_forfeit(turn: BotTurn, *, code: str, detail: str) -> None:
    bot_forfeit(
        match_id=turn.match_id, seat=turn.seat, ply=turn.ply, bot_id=turn.bot.pk,
        code=code, detail=detail,
    )  # fmt: skip


def bot_forfeit(*, match_id: int, seat: int, ply: int, bot_id: int, code: str, detail: str) -> None:
    """Forfeit the match for the bot's seat at ``ply``, and count the failure against the
    bot (unless the match had ended or moved on meanwhile)."""
    from games.services import match_forfeit

    logger.info(
        "bot %s forfeits match %s at ply %s: %s (%s)", bot_id, match_id, ply, code, detail,
        extra={"match_id": match_id},
    )  # fmt: skip
    match = match_forfeit(match_id=match_id, seat=seat, code=code, detail=detail, expected_ply=ply)
    # The match may have ended otherwise meanwhile; then this fault cost the bot nothing.
    if match.forfeit_seat == seat and match.ply == ply:
        with transaction.atomic():
            bot_health_record(bot_id=bot_id, ok=False)


def match_play_to_end(*, match_id: int, poll: float = 0.2, pool: bool = False) -> str:
    """Play a match of server-side bots until it ends; return its status.

    ``bot_turns_play`` returns at once when another call holds the match's claim: a
    duplicate task, or a worker that died holding it. Then wait and try again, for as
    long as the match makes progress, or until the dead worker's claim lapses; give up
    (and return "active") when nothing moved for longer than any claim lasts.

    With ``pool``, return "active" as soon as an HTTP bot's call is on the I/O pool (this
    call's or another driver's): the match is played on by the pool's answers, and
    the caller learns of its end from ``games.events`` (``Change.FINISHED``) instead of
    holding a worker process while the bots think. Call it outside any transaction.
    """
    from games.models import Match

    match = Match.objects.only("move_time_limit").get(pk=match_id)
    patience = max(BUILTIN_LEASE, match.move_time_limit + LEASE_GRACE) + 5.0
    last_ply = None
    moved_at = time.monotonic()
    while True:
        driver = _play(match_id, max_moves=None, pool=pool, holder="")
        status, ply = Match.objects.values_list("status", "ply").get(pk=match_id)
        if status != Match.Status.ACTIVE:
            return status
        if driver.pool and (driver.handed_off or _call_in_flight(match_id)):
            return status
        if ply != last_ply:
            last_ply, moved_at = ply, time.monotonic()
        elif time.monotonic() - moved_at > patience:
            return status
        time.sleep(poll)


def _call_in_flight(match_id: int) -> bool:
    """Whether an HTTP bot's call of the match is queued or in flight on the I/O pool."""
    return BotTurnLease.objects.filter(
        match_id=match_id, calling_owner__isnull=False, expires_at__gt=timezone.now()
    ).exists()
