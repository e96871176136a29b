"""HTTP bots' turns: a call queued by the driver, sent by the I/O pool, its answer played.

A call is a plain dict (JSON, so that it can travel on the broker): the turn it is for,
the bot's URL and secret, the request built from the state, the bot's time limit, the
driver's claim (``holder``) and when the turn was queued. With the I/O pool
(``BOTS_CALL_QUEUE``):

1. ``call_dispatch`` (the driver: a CPU worker, or the pool itself after an answer):
   check the owner's share of calls in flight (``BOTS_CALLS_PER_OWNER``), renew the claim
   to cover the call, and hand the call to the pool: on the call queue
   (``bots.tasks.bot_call``), or straight to this process's pool when it is one. Over
   the share, look again shortly.
2. ``CallPool`` (``bots.pool``, the ``bot-calls`` worker: one asyncio event loop a
   process, holding every call in flight as a coroutine): send the request, with the
   bot's whole time limit counted from that moment, and wait for the answer
   (``cardkit.caller``).
3. One of the pool's few recording threads (``BOTS_CALL_RECORDERS``, each with its
   database connection; ``bots.pool.answers_record``): play the move, or forfeit the seat
   with the fault; then the driver plays on there while HTTP bots are to move (their next
   call goes to the same loop, with no broker message between), and hands the match to a
   CPU worker when a built-in bot is to move (``bots.tasks.play_bot_turns``).

The bot's time runs from its request sent to its answer arrived; what comes before (the
queues, the owner's share used up) is the arena's delay and never the bot's: a call that
could not be sent within ``BOTS_CALL_SEND_WITHIN`` seconds of being queued goes back to
step 1, and the move records when it was queued and sent. A call lost with its process
is taken up again when the match's claim lapses (``bots.tasks.resume_abandoned_turns``).
Without the pool (tasks run eagerly, the command line, tests) the three steps run one
after another in the driver's thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from bots.driver import TURN_GONE, BotTurn, ClaimLost, Driver, bot_forfeit, bot_move_key
from bots.leases import (
    CALL_BEAT,
    CALL_HELD,
    LEASE_GRACE,
    claim_moved_on_later,
    db_time,
    lease_claim,
    lease_release,
    lease_statements,
)
from bots.services import bot_caller, bot_health_record
from bots.share import owner_shares
from cardkit.caller import AsyncBotCaller
from cardkit.protocol import BotAnswer, Fault, move_request, request_timed

logger = logging.getLogger(__name__)

# Seconds a call over its owner's share waits before it looks again.
SHARE_RETRY = 0.25


# How a call reaches the I/O pool (``bots.pool.call_send``: straight to this process's
# pool, or on the call queue), handed down by ``BotsConfig.ready``: ``bots.pool`` builds
# on this module, so this one never imports it.
_pool_send: Callable[[dict], None] | None = None


def pool_connect(send: Callable[[dict], None]) -> None:
    """Send calls to the I/O pool with ``send`` (``BotsConfig.ready``: ``pool.call_send``)."""
    global _pool_send
    _pool_send = send


def http_turn_play(turn: BotTurn, driver: Driver) -> int:
    """Ask the HTTP bot of ``turn`` for its move; return 1 if a move was made here.

    With the pool, the call is queued and 0 returned (``driver.handed_off``: the claim
    stays with the call). Without it, the call is made and its answer played at once.
    """
    call = _call_new(turn, driver)
    if driver.pool and driver.claimed:
        # The driver's own claim: the dispatch moves it on to this ply in its transaction.
        driver.handed_off = True
        held = driver.share_held
        if call_dispatch(call, renew=True, must_hold=driver.claim_unchecked, share_held=held):
            driver.calling_owner = call["owner_id"]
        return 0
    if not lease_claim(turn, driver, hold_for=_call_hold(call, pooled=driver.pool)):
        return 0
    if driver.pool:
        driver.handed_off = True
        if call_dispatch(call):
            driver.calling_owner = call["owner_id"]
        return 0
    return int(answer_play(call, call_make(call)))


def _call_new(turn: BotTurn, driver: Driver) -> dict:
    limit = turn.move_time_limit
    payload = move_request(
        state=turn.state,
        match_id=turn.match_id,
        game=turn.game,
        options=turn.options,
        time_limit=limit,
        now=timezone.now(),
    )
    bot = turn.bot
    return {
        "match_id": turn.match_id,
        "ply": turn.ply,
        "seat": turn.seat,
        "bot_id": bot.pk,
        "owner_id": bot.owner_id,
        "url": bot.url,
        "secret": bot.secret,
        "payload": payload,
        "time_limit": limit,
        "holder": driver.holder,
        "queued_at": time.time(),
        "send_by": None,
        # A good answer clears the bot's failures: a write only when there are some.
        "recovers": bool(bot.consecutive_failures or not bot.healthy),
    }


def _call_hold(call: dict, *, pooled: bool) -> float:
    """Seconds the match's claim must last for the call: pooled, its wait to be sent and
    until the pool's heartbeat renews it; else the bot's time and the recording of the
    answer."""
    if pooled:
        return settings.BOTS_CALL_SEND_WITHIN + CALL_HELD
    return call["time_limit"] + LEASE_GRACE


def call_dispatch(
    call: dict, *, renew: bool = False, must_hold: bool = False, share_held: tuple | None = None
) -> bool:
    """Queue the call on the I/O pool, if its owner has calls to spare; else look again in
    ``SHARE_RETRY`` seconds. Nothing is sent when the match's claim is no longer the
    call's (the match moved on, or another driver took it after the claim lapsed). With
    ``renew``, the call's driver holds the claim from an earlier ply, and it is moved on
    to the call's ply here. Return whether the call was queued (and so counts against its
    owner's share until its answer is played); with ``must_hold``, raise ClaimLost instead
    of returning when the claim is no longer the call's. ``share_held``: (owner, until
    when) of the match's call before, still counted in Redis: a call of that owner is the
    same entry, which an admission would admit whatever the cap, so while it lasts
    the send window and a beat more, no round trip (the heartbeat renews it with the claim)."""
    now = timezone.now()
    share_until = share_held[1] if share_held and share_held[0] == call["owner_id"] else 0.0
    # Kept long enough for the wait to be sent, then until a beat renews it (two to spare).
    if share_until - time.time() > settings.BOTS_CALL_SEND_WITHIN + CALL_BEAT + 2.0:
        allowed = True
    else:
        share_until = time.time() + _call_hold(call, pooled=True)
        allowed = _share_admit(call)
        if not allowed:
            share_until = 0.0
    # In the pool, inside the transaction of the answer before (no savepoint: an error
    # there undoes that move too, and the match is taken up again when its claim lapses).
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        statements = lease_statements(connection)
        if allowed is None:
            # No Redis: the owner's row is the share's lock, so that two workers
            # dispatching calls of one owner at once count one after the other.
            cursor.execute(statements["owner_lock"], [call["owner_id"]])
            cursor.execute(
                statements["owner_calls"], [call["owner_id"], db_time(now), call["match_id"]]
            )
            allowed = cursor.fetchone()[0] < settings.BOTS_CALLS_PER_OWNER
        hold = _call_hold(call, pooled=True) if allowed else SHARE_RETRY + LEASE_GRACE
        values = [
            call["ply"],
            call["owner_id"] if allowed else None,
            db_time(now + timedelta(seconds=hold)),
            call["match_id"],
            call["holder"],
        ]
        if renew and allowed and claim_moved_on_later(values):
            # Written with the other answers' claims, at the end of their transaction,
            # which ClaimLost undoes whole if this one was not held.
            kept = 1
        elif renew:
            cursor.execute(statements["claim_move_on"], values)
            kept = cursor.rowcount
        else:
            cursor.execute(
                statements["claim_move_on"] + statements["at_ply"], [*values, call["ply"]]
            )
            kept = cursor.rowcount
    if not kept:
        if allowed:
            share_release(call)
        if must_hold:
            raise ClaimLost(call["match_id"])
        return False
    if allowed:
        # ``claim_until``: the claim's expiry as written above, which the pool's heartbeat
        # need not renew before it comes within CALL_HELD seconds.
        call = {
            **call,
            "send_by": time.time() + settings.BOTS_CALL_SEND_WITHIN,
            "claim_until": now.timestamp() + hold,
            # Until when the call's entry in its owner's share lasts at least (Redis).
            "share_until": share_until,
        }
        if _pool_send is None:
            raise RuntimeError("no I/O pool to send to: BotsConfig.ready() connects bots.pool")
        _pool_send(call)
    else:
        bot_call_dispatch.apply_async((call,), countdown=SHARE_RETRY)
    return bool(allowed)


# Named as the task of bots.tasks it has always been (the routes and the workers know it by
# that name); defined here, beside the dispatch it retries, and re-exported there.
@shared_task(name="bots.tasks.bot_call_dispatch", acks_late=False, ignore_result=True)
def bot_call_dispatch(call: dict) -> None:
    """Queue an HTTP bot's call on the I/O pool once its owner has calls to spare."""
    call_dispatch(call)


def share_member(match_id: int, holder: str) -> str:
    """The name a call has in its owner's share: its match and its driver's claim."""
    return f"{match_id}:{holder}"


def _share_admit(call: dict) -> bool | None:
    """Count the call against its owner's share in Redis; return whether it may be sent,
    or None when the database counts the shares (no Redis, or Redis did not answer)."""
    shares = owner_shares()
    if shares is None:
        return None
    try:
        return shares.admit(
            owner_id=call["owner_id"], call=share_member(call["match_id"], call["holder"]),
            hold=_call_hold(call, pooled=True), cap=settings.BOTS_CALLS_PER_OWNER,
        )  # fmt: skip
    except Exception as exc:
        logger.warning("bot calls: owners' shares counted in the database (%s)", exc)
        return None


def share_release(call: dict) -> None:
    """Give the call back to its owner's share (kept in Redis; the database's count is
    the claim's ``calling_owner``, cleared with it)."""
    shares = owner_shares()
    if shares is None:
        return
    try:
        member = share_member(call["match_id"], call["holder"])
        shares.release(owner_id=call["owner_id"], call=member)
    except Exception as exc:
        # The entry lapses on its own within the claim's time.
        logger.warning("bot calls: could not give back a call's share (%s)", exc)


def call_make(call: dict) -> dict:
    """Send the call's request and return the answer as JSON, in this thread; no database.

    Return ``{"late": true}`` without sending when the call waited past its ``send_by``:
    the match's claim may have lapsed meanwhile, and the turn is queued anew.
    """
    if _late(call):
        return {"late": True}
    payload, sent_at = _request_timed(call)
    answer = bot_caller().request_move(call["url"], call["secret"], payload, call["time_limit"])
    return _answer_json(answer, sent_at)


async def call_make_async(call: dict, caller: AsyncBotCaller) -> dict:
    """``call_make`` on an event loop, with its caller."""
    if _late(call):
        return {"late": True}
    payload, sent_at = _request_timed(call)
    answer = await caller.request_move(call["url"], call["secret"], payload, call["time_limit"])
    return _answer_json(answer, sent_at)


def _late(call: dict) -> bool:
    return call["send_by"] is not None and time.time() > call["send_by"]


def _request_timed(call: dict) -> tuple[dict, float]:
    """Return the call's request with its deadline from now, and now (the send)."""
    limit = call["time_limit"]
    sent_at = time.time()
    payload = request_timed(
        call["payload"], deadline=datetime.fromtimestamp(sent_at + limit, UTC), time_limit=limit
    )
    return payload, sent_at


def _answer_json(answer: BotAnswer, sent_at: float) -> dict:
    return {
        "move": answer.move,
        "fault": None if answer.fault is None else str(answer.fault),
        "detail": answer.detail,
        "sent_at": sent_at,
        "answered_at": sent_at + answer.elapsed,
        "comment": answer.comment,
    }


def answer_play(call: dict, answer: dict) -> bool:
    """Play the bot's answer to the call, or forfeit its seat with the fault; return
    whether a move was made (then the driver plays on with the call's claim, which is let
    go otherwise).

    An answer whose call no longer holds the match's claim is dropped: another driver
    took the match after the claim lapsed and asks the bot again.
    """
    return answer_play_on(call, answer)[0] is not None


def answer_play_on(call: dict, answer: dict, *, play_on: bool = False):
    """``answer_play``; return the match as the move left it (None when no move was made)
    and, with ``play_on``, the driver that played on in the move's own transaction
    (``bots.driver.http_turns_play``): the pool plays on there, so that the next call's
    claim moves on with the move, in one commit."""
    from games import errors as match_errors

    if answer.get("late"):
        call_dispatch(call)
        return None, None
    if answer["fault"] is not None:
        if not _call_end(call):
            return None, None
        answer_fault_record(call, answer["fault"], answer["detail"])
        return None, None
    try:
        with transaction.atomic():
            match, played = move_record(call, answer, play_on=play_on)
    except match_errors.IllegalMoveError as exc:
        answer_fault_record(call, Fault.ILLEGAL_MOVE, str(exc))
        return None, None
    except TURN_GONE:
        lease_release(call["match_id"], call["holder"])
        return None, None
    except ClaimLost:
        return None, None
    if match is not None:
        answer_recovered(call)
    return match, played


def move_record(call: dict, answer: dict, *, play_on: bool = False):
    """Append the move of a good answer (no fault, not late) to its match, inside the
    caller's transaction; with ``play_on``, play on there (``http_turns_play``). Return
    the match and the driver that played on (None without ``play_on``), or (None, None)
    when the call no longer holds the match's claim (nothing is written then).

    Raise IllegalMoveError, one of TURN_GONE, or (with ``play_on``) ClaimLost, having
    written nothing that the caller's rollback would not undo: the caller forfeits or lets
    go (``answer_fault_record``, ``lease_release``) after that rollback.
    """
    from bots.driver import http_turns_play
    from games.move_services import ArenaMove, match_moves_append

    # Playing on, the claim's own write (moved on to the next call, or let go) checks that
    # the call still holds it, one round trip less than checking first; that write comes
    # after the match's row is locked, so the claim cannot change hands in between.
    if not play_on and not _call_end(call):
        return None, None
    move = ArenaMove(
        seat=call["seat"],
        move=answer["move"],
        received_at=_moment(answer["answered_at"]),
        idempotency_key=bot_move_key(call["bot_id"], call["ply"]),
        queued_at=_moment(call["queued_at"]),
        sent_at=_moment(answer["sent_at"]),
        # An answer recorded by a pool that predates comments has none.
        comment=answer.get("comment") or "",
    )
    # Not held to the match's deadline: the call itself ended within the bot's time,
    # counted from its send; the arena's delay before the send is not the bot's.
    match = match_moves_append(
        match_id=call["match_id"], ply=call["ply"], moves=[move], savepoint=False
    )
    if not play_on:
        return match, None
    held = (call["owner_id"], call.get("share_until", 0.0))
    return match, http_turns_play(match=match, holder=call["holder"], share_held=held)


def answer_fault_record(call: dict, code: str, detail: str) -> None:
    """Forfeit the call's seat with the fault, and let go of the match (its own
    transactions)."""
    bot_forfeit(
        match_id=call["match_id"], seat=call["seat"], ply=call["ply"], bot_id=call["bot_id"],
        code=code, detail=detail,
    )  # fmt: skip
    lease_release(call["match_id"], call["holder"])


def answer_recovered(call: dict) -> None:
    """After a good answer's move is committed: clear the bot's failures, if it had any."""
    if call["recovers"]:
        with transaction.atomic():
            bot_health_record(bot_id=call["bot_id"], ok=True)


def _call_end(call: dict) -> bool:
    """Mark the call over (its owner's share is free again) while its claim holds the
    match; return False when it no longer does."""
    grace = timezone.now() + timedelta(seconds=LEASE_GRACE)
    with connection.cursor() as cursor:
        cursor.execute(
            lease_statements(connection)["call_end"],
            [db_time(grace), call["match_id"], call["holder"], call["ply"]],
        )
        return bool(cursor.rowcount)


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
