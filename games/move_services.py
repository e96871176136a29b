"""Playing a match: a move submitted by a player, moves appended by the arena's players.

Like every action on a match (``games.services``), each runs as one transaction that
locks the match's row first; the answer to a request repeated with its Idempotency-Key
is the first answer again, and nothing new is written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from cardkit.engine import IllegalMove, InvalidMove, same_move
from games import clock
from games.errors import (
    IdempotencyKeyReused,
    IllegalMoveError,
    InvalidMatchRequest,
    MatchNotActive,
    NotYourTurn,
    StalePly,
)
from games.events import Change, match_changed_announce
from games.models import Match, Move
from games.records import match_records_count
from games.rows import match_row, matches_locked_ahead, moves_insert_match_update
from games.selectors import (
    match_state,
    match_state_keep,
    match_state_known,
    state_end_reason,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MoveOutcome:
    """The answer to a move: the logged move and the match after it.

    ``replayed`` is true when the request repeated an earlier one (same Idempotency-Key,
    ply and move) and nothing was written. ``ended_match`` is true when this move ended the
    match; it depends only on the log, so a repeated request gets the same value.
    """

    move: Move
    match: Match
    replayed: bool
    ended_match: bool


def match_move_submit(
    *,
    match_id: int,
    seat: int,
    ply: int,
    move: dict,
    idempotency_key: str = "",
    now: datetime | None = None,
    notify: bool = True,
    comment: str = "",
) -> MoveOutcome:
    """Play ``move`` for ``seat`` as the answer to ``ply``, and append it to the log.

    ``comment`` is stored with the move: the caller has checked its length
    (``cardkit.protocol.MAX_COMMENT_BYTES``).

    The caller has checked that the requester holds ``seat``. A request that repeats an
    earlier one (same non-empty ``idempotency_key``, ply, seat and move) returns that
    move's outcome and writes nothing. Raise MatchNotActive, NotYourTurn, StalePly (each
    with the current ply), IllegalMoveError naming the broken rule, or
    IdempotencyKeyReused. A move later than the deadline (plus a grace) forfeits the
    match instead, and raises MatchNotActive. With ``notify`` false no turn notice is sent
    after the move (the bot driver, which goes on playing the arena's seats itself).

    Cost: one locked SELECT of the match, one INSERT, one UPDATE; the state comes from
    the snapshot, so it does not depend on the length of the log.
    """
    try:
        with transaction.atomic():
            match = match_row(match_id, for_update=True)
            if match is None:
                raise Match.DoesNotExist(f"No match {match_id}.")
            now = now or timezone.now()
            if idempotency_key and ply < match.ply:
                earlier = _repeated_move(match, seat, ply, move, idempotency_key)
                if earlier is not None:
                    return earlier
            if match.status != Match.Status.ACTIVE:
                raise MatchNotActive(match.status, match.ply)
            if seat != match.to_move:
                raise NotYourTurn(match.ply, match.to_move)
            if ply != match.ply:
                raise StalePly(match.ply, match.to_move)
            if not clock.move_is_late(match, now):
                played = ArenaMove(seat, move, now, idempotency_key, comment=comment)
                (logged,) = _play(match, [played], notify=notify)
                return MoveOutcome(
                    move=logged,
                    match=match,
                    replayed=False,
                    ended_match=match.status == Match.Status.FINISHED,
                )
            # The forfeit is committed when this block ends; the error is raised after.
            clock.match_forfeit_on_time(match=match, seat=seat, now=now)
    except IntegrityError:
        # Only reached if two writers got past the row lock (it cannot happen with the
        # lock, but the unique constraints are the last guard): answer like the loser of
        # the race would have been answered with the lock.
        return _after_duplicate(match_id, seat, ply, move, idempotency_key)
    raise MatchNotActive(
        Match.Status.FINISHED,
        match.ply,
        "The move came after the deadline: the seat lost the match on time.",
    )


@dataclass(frozen=True, slots=True)
class ArenaMove:
    """A move for ``match_moves_append``: its seat, the move, when it was made, and the
    Idempotency-Key it is logged with (empty for none)."""

    seat: int
    move: dict
    received_at: datetime
    idempotency_key: str = ""
    # A move asked of a bot over HTTP: when its call was queued and sent (Move's fields).
    queued_at: datetime | None = None
    sent_at: datetime | None = None
    # When a built-in player began to decide it: with ``sent_at``, where the player's own
    # time starts, so that the arena's queues before it are never counted as the bot's.
    started_at: datetime | None = None
    # The bot's word on the move (Move.comment), already within its limit.
    comment: str = ""


def match_moves_append(
    *, match_id: int, ply: int, moves: Sequence[ArenaMove], savepoint: bool = True
) -> Match:
    """Append moves made one after another by the arena's own players, in one transaction.

    For the bot driver: a built-in player decides a move in microseconds, and a
    transaction per move cost a hundred times more than the decision. The moves are
    checked and played in order exactly as ``match_move_submit`` plays one: the first
    answers ``ply``; each must be its seat's turn and legal. All or nothing: raise
    MatchNotActive, StalePly, NotYourTurn or IllegalMoveError (naming the ply) and write
    nothing. Return the match as it is after them.

    Built-in players are not held to the clock: a move of theirs that comes after the
    deadline was late because the arena stalled (a worker died mid-match and the match
    resumes from its log), not because the player thought too long.

    Announces the moves with ``arena_to_move`` false: the driver that made these
    moves goes on playing the arena's seats itself.

    Inside a transaction of the caller's, ``savepoint=False`` spares the savepoint (two
    round trips); then an error undoes the caller's whole transaction.
    """
    if not moves:
        raise InvalidMatchRequest("no moves to append")
    with transaction.atomic(savepoint=savepoint):
        # A state kept from this process's last moves spares reading the snapshot.
        match = match_row(
            match_id, for_update=True, snapshot_unless_at=match_state_known(match_id)
        )
        if match is None:
            raise Match.DoesNotExist(f"No match {match_id}.")
        if match.status != Match.Status.ACTIVE:
            raise MatchNotActive(match.status, match.ply)
        if ply != match.ply:
            raise StalePly(match.ply, match.to_move)
        if moves[0].seat != match.to_move:
            raise NotYourTurn(match.ply, match.to_move)
        _play(match, moves, notify=False)
    return match


@contextmanager
def matches_locked(*, match_ids: Iterable[int]) -> Iterator[None]:
    """Lock the matches' rows in one statement, for the ``match_moves_append`` of each
    in this block (one append a match: it takes the row instead of locking it itself);
    on PostgreSQL, write the moves appended in the block, and their matches, in one
    statement when it ends (a move that ends its match is written at once), raising there
    any error of those writes.

    For the I/O pool, which records the answers that came at once in one transaction: one
    locked read and one write for all of them, where each had its own. Call it inside that
    transaction, before anything in it writes these matches; nothing in the block may read
    their rows or moves from the database after their append.
    """
    with matches_locked_ahead({i: match_state_known(i) for i in match_ids}):
        yield


def _play(match: Match, moves: Sequence[ArenaMove], *, notify: bool = True) -> list[Move]:
    """Play the moves on the locked match, in order: one INSERT and one UPDATE (one
    statement on PostgreSQL: ``games.rows.moves_insert_match_update``).

    The turns after the first start when the move before them was made; with ``notify``,
    the seat to move after the last is handed its turn after commit.
    """
    state = match_state(match)
    logged = []
    turn_started_at = match.turn_started_at
    ply = match.ply
    for played in moves:
        if played.seat != state.to_move:
            raise NotYourTurn(ply, state.to_move)
        try:
            state = state.play(played.move)
        except InvalidMove as exc:
            raise IllegalMoveError(_at_ply(exc, ply, moves), unreadable=True) from None
        except IllegalMove as exc:
            raise IllegalMoveError(_at_ply(exc, ply, moves)) from None
        logged.append(
            Move(
                match=match,
                ply=ply,
                seat=played.seat,
                move=played.move,
                received_at=played.received_at,
                time_taken=_time_taken(played, turn_started_at),
                idempotency_key=played.idempotency_key,
                queued_at=played.queued_at,
                sent_at=played.sent_at,
                comment=played.comment,
            )
        )
        logger.debug(
            "match %s ply %s: seat %s played %s",
            match.pk, ply, played.seat, played.move,
            extra={"match_id": match.pk, "ply": ply, "seat": played.seat},
        )  # fmt: skip
        turn_started_at = played.received_at
        ply += 1
        if state.is_over and ply - match.ply < len(moves):
            raise IllegalMoveError(f"ply {ply}: the match ended at the move before")
    now = moves[-1].received_at
    match.ply = ply
    match.snapshot = state.to_json()
    match.snapshot_ply = match.ply
    fields = ["ply", "snapshot", "snapshot_ply", "to_move", "turn_started_at", "deadline_at"]
    if state.is_over:
        match.to_move = None
        match.turn_started_at = None
        match.deadline_at = None
        match.status = Match.Status.FINISHED
        match.result = state.result
        match.loser = state.result["loser"]
        match.end_reason = state_end_reason(state) or ""
        match.finished_at = now
        match.seed_revealed = True
        fields += ["status", "result", "loser", "end_reason", "finished_at", "seed_revealed"]
        logger.info(
            "match %s finished after %s moves: loser %s (%s)",
            match.pk, match.ply, match.loser, match.end_reason, extra={"match_id": match.pk},
        )
    else:
        match.to_move = state.to_move
        clock.turn_open(match, now)
    # The moves' INSERT and the match's UPDATE: one round trip on PostgreSQL, or with the
    # other matches' of a ``matches_locked`` block at its end, unless the match ended (its
    # records are counted from its moves, read below).
    moves_insert_match_update(logged, match, fields, later=not state.is_over)
    match_state_keep(match, state)
    if state.is_over:
        match_records_count(match=match)
        match_changed_announce(match, Change.FINISHED)
    else:
        match_changed_announce(match, Change.MOVED, arena_to_move=notify and match.arena_to_move)
    return logged


def _time_taken(played: ArenaMove, turn_started_at: datetime | None) -> float:
    """The player's own time for the move: from the request sent (an HTTP bot) or the
    decision begun (a built-in player), else from the turn's start (a person or a client
    bot, whose turn is theirs from then)."""
    began = played.sent_at or played.started_at or turn_started_at
    if began is None:
        return 0.0
    return max(0.0, (played.received_at - began).total_seconds())


def _at_ply(error: Exception, ply: int, moves: Sequence[ArenaMove]) -> str:
    """The engine's message, naming the ply when several moves are played at once."""
    return str(error) if len(moves) == 1 else f"ply {ply}: {error}"


def _repeated_move(
    match: Match, seat: int, ply: int, move: dict, idempotency_key: str
) -> MoveOutcome | None:
    """Return the outcome of the earlier identical request, or None if there was none.

    Raise IdempotencyKeyReused when the move at ``ply`` carries this key but differs.
    """
    earlier = Move.objects.filter(match=match, ply=ply).first()
    if earlier is None or earlier.idempotency_key != idempotency_key:
        return None
    if earlier.seat != seat or not same_move(earlier.move, move):
        raise IdempotencyKeyReused()
    return MoveOutcome(
        move=earlier, match=match, replayed=True, ended_match=_ended_match(match, earlier)
    )


def _after_duplicate(
    match_id: int, seat: int, ply: int, move: dict, idempotency_key: str
) -> MoveOutcome:
    match = Match.objects.get(pk=match_id)
    if idempotency_key:
        earlier = _repeated_move(match, seat, ply, move, idempotency_key)
        if earlier is not None:
            return earlier
        if Move.objects.filter(match=match, idempotency_key=idempotency_key).exists():
            raise IdempotencyKeyReused()
    raise StalePly(match.ply, match.to_move)


def _ended_match(match: Match, move: Move) -> bool:
    return (
        match.status == Match.Status.FINISHED
        and match.ply == move.ply + 1
        and match.forfeit_seat is None
    )
