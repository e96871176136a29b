"""The bot-turn driver: the arena plays the moves of its built-in and HTTP bots.

``bots`` subscribes to ``games``' announcement that a match changed (``bots.apps``); when
the seat to move is one the arena drives, ``bots.tasks.match_turn_started`` runs
``bot_turns_play`` for the match. ``bots.play_to_end.match_play_to_end`` plays a match of
server-side bots to its end (tournaments, the ladder).

A match is claimed (``BotTurnLease``, ``bots.leases``) by the driver playing it; the claim
lapses if the driver dies, so another one can take the match up from its move log.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bots.leases import BUILTIN_LEASE, ClaimLost, lease_claim, lease_release
from bots.models import Bot
from bots.seat_bots import _seat_bots
from bots.services import bot_health_record
from cardkit.protocol import Fault
from games.errors import IdempotencyKeyReused, MatchNotActive, NotYourTurn, StalePly

logger = logging.getLogger(__name__)

# The matches this thread is playing right now. A move's commit may start the driver
# again for the same match (``bots.tasks.match_turn_started`` run eagerly); that inner
# call returns at once and the loop already running plays on, so a long match does not
# become deep recursion.
_PLAYING: ContextVar[frozenset[int]] = ContextVar("bot_turns_playing", default=frozenset())

# How an HTTP bot's turn is played (``bots.calls.http_turn_play``), handed down by
# ``BotsConfig.ready``: ``bots.calls`` builds on this module, so this one never imports it.
_http_turn_play: Callable[[BotTurn, Driver], int] | None = None


def http_turns_connect(play: Callable[[BotTurn, Driver], int]) -> None:
    """Play HTTP bots' turns with ``play`` (``BotsConfig.ready``: ``calls.http_turn_play``)."""
    global _http_turn_play
    _http_turn_play = play


def pool_enabled() -> bool:
    """Whether calls go to the I/O pool: a queue is configured and tasks are not run
    eagerly (then the call is made in the caller's thread, as everything else is)."""
    from cardserver.celery import app

    return bool(settings.BOTS_CALL_QUEUE) and not app.conf.task_always_eager


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
    ``BOTS_BUILTIN_MOVES_PER_WRITE`` at a time (``games.move_services.match_moves_append``):
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


def http_turns_play(*, match: Any, holder: str, share_held: tuple | None = None) -> Driver:
    """Play on after an HTTP bot's answer, in the I/O pool, with the answer's claim: hand
    the next HTTP bot's call to the pool; stop at a person's or a client bot's turn, or
    at a built-in bot's. Return the driver: whether a built-in bot is to move
    (``builtin_next``: a CPU worker plays it, ``bots.tasks.play_bot_turns``), and the
    owner of the call handed to the pool (``calling_owner``). ``match`` is the row as the
    answer's move left it (``games.move_services.match_moves_append``).

    Call it in the transaction of that move, whose claim has not been checked yet: the
    claim's last write here (moved on to the next call, or let go) must find it held by
    ``holder``, else ClaimLost is raised, so that the caller's rollback undoes the move.
    ``share_held``: the answered call's owner and until when its share lasts
    (``bots.calls.call_dispatch``).
    """
    driver = Driver(
        holder=holder, claimed=True, builtin=False, match=match, claim_unchecked=True,
        share_held=share_held,
    )  # fmt: skip
    return _drive(driver, match.pk, max_moves=None, pool=True)


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
    driver.pool = pool and pool_enabled()
    playing = _PLAYING.get()
    if match_id in playing:
        return driver
    token = _PLAYING.set(playing | {match_id})
    played = 0
    try:
        while True:
            stopped = released = False
            try:
                while max_moves is None or played < max_moves:
                    limit = None if max_moves is None else max_moves - played
                    moved = _bot_turns_step(match_id, driver, limit=limit)
                    if not moved:
                        break
                    played += moved
                stopped = True
            finally:
                driver.played = played
                # A call handed to the I/O pool keeps the claim: its answer plays on with it.
                if driver.claimed and not driver.handed_off:
                    released = lease_release(match_id, driver.holder)
                    if stopped and driver.claim_unchecked and not released:
                        raise ClaimLost(match_id)
            # The next turn may have come after this driver last looked and before it let
            # go: its notice found the match claimed and left the turn to this driver. So
            # the driver that lets go looks again, and plays on if an arena seat is to move.
            if not (
                released
                and not driver.claim_unchecked
                and (max_moves is None or played < max_moves)
                and _arena_turn_waiting(match_id)
            ):
                return driver
            driver.claimed = False
    finally:
        _PLAYING.reset(token)


def _arena_turn_waiting(match_id: int) -> bool:
    """Whether the match is active with a seat the arena plays to move."""
    from games.models import Match

    match = Match.objects.filter(pk=match_id).only("status", "to_move", "arena_seats").first()
    return match is not None and match.status == Match.Status.ACTIVE and match.arena_to_move


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
    # The answered call's owner and until when its entry in the owner's share lasts.
    share_held: tuple | None = None


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
    if _http_turn_play is None:
        raise RuntimeError("no HTTP turn player: BotsConfig.ready() connects bots.calls")
    return _http_turn_play(turn, driver)


def _builtin_moves_play(turn: BotTurn, driver: Driver, *, limit: int | None) -> int:
    """Play the built-in players' moves from ``turn`` on while a built-in bot is to move (at
    most ``limit``), appending them ``BOTS_BUILTIN_MOVES_PER_WRITE`` at a time; return
    how many were played.

    The state stays in memory from one write to the next: only this driver, holding the
    match's claim, moves in it meanwhile (a person cannot: no person's seat is to move).
    """
    from games.move_services import match_moves_append

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
    from cardkit.engine import IllegalMove
    from cardkit.players import decision_rng, get_player
    from games.move_services import ArenaMove

    state, ply, bot = turn.state, turn.ply, turn.bot
    moves: list[ArenaMove] = []
    while True:
        seat = state.to_move
        started_at = timezone.now()
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
        moves.append(
            ArenaMove(
                seat, move, timezone.now(), bot_move_key(bot.pk, ply), started_at=started_at
            )
        )
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


def _bot_forfeit(turn: BotTurn, *, code: str, detail: str) -> None:
    bot_forfeit(
        match_id=turn.match_id, seat=turn.seat, ply=turn.ply, bot_id=turn.bot.pk,
        code=code, detail=detail,
    )  # fmt: skip


def bot_forfeit(*, match_id: int, seat: int, ply: int, bot_id: int, code: str, detail: str) -> None:
    """Forfeit the match for the bot's seat at ``ply``, and count the failure against the
    bot (unless the match had ended or moved on meanwhile)."""
    from games.match_endings import match_forfeit

    logger.info(
        "bot %s forfeits match %s at ply %s: %s (%s)", bot_id, match_id, ply, code, detail,
        extra={"match_id": match_id},
    )  # fmt: skip
    match = match_forfeit(match_id=match_id, seat=seat, code=code, detail=detail, expected_ply=ply)
    # The match may have ended otherwise meanwhile; then this fault cost the bot nothing.
    if match.forfeit_seat == seat and match.ply == ply:
        with transaction.atomic():
            bot_health_record(bot_id=bot_id, ok=False, reason=f"{code} ({detail})"[:200])
