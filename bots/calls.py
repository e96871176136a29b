"""HTTP bots' turns: a call queued by the driver, sent by the I/O pool, its answer played.

A call is a plain dict (JSON, so that it can travel on the broker): the turn it is for,
the bot's URL and secret, the request built from the state, the bot's time limit, the
driver's claim (``holder``) and when the turn was queued. Three steps, each its own
Celery task when the I/O pool is in use (``BOTS_CALL_QUEUE``):

1. ``call_dispatch`` (a CPU worker, with the database): check the owner's share of calls
   in flight (``BOTS_CALLS_PER_OWNER``), renew the claim to cover the call, and queue the
   call on the I/O pool (``bots.tasks.bot_call``); over the share, look again shortly.
2. ``call_make`` (the I/O pool: many threads, no database): send the request, with the
   bot's whole time limit counted from that moment, and wait for the answer.
3. ``answer_play`` (a CPU worker): play the move, or forfeit the seat with the fault;
   the driver then plays on (``bots.tasks.bot_answer_play``).

The bot's time runs from its request sent to its answer arrived; what comes before (the
queues, a worker busy elsewhere, the owner's share used up) is the arena's delay and
never the bot's: a call that could not be sent within ``BOTS_CALL_SEND_WITHIN`` seconds
of being queued goes back to step 1, and the move records when it was queued and sent.
Without the pool (tasks run eagerly, the command line, tests) the three steps run one
after another in the driver's thread.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from bots.driver import (
    LEASE_GRACE,
    TURN_GONE,
    BotTurn,
    Driver,
    bot_forfeit,
    bot_move_key,
    lease_claim,
    lease_release,
)
from bots.models import BotTurnLease
from bots.protocol import Fault, move_request, request_timed
from bots.services import bot_caller, bot_health_record

# Seconds a call over its owner's share waits before it looks again.
SHARE_RETRY = 0.25


def pool_enabled() -> bool:
    """Whether calls go to the I/O pool: a queue is configured and tasks are not run
    eagerly (then the call is made in the caller's thread, as everything else is)."""
    from cardserver.celery import app

    return bool(settings.BOTS_CALL_QUEUE) and not app.conf.task_always_eager


def http_turn_play(turn: BotTurn, driver: Driver) -> int:
    """Ask the HTTP bot of ``turn`` for its move; return 1 if a move was made here.

    With the pool, the call is queued and 0 returned (``driver.handed_off``: the claim
    stays with the call). Without it, the call is made and its answer played at once.
    """
    call = _call_new(turn, driver)
    if driver.pool and driver.claimed:
        # The driver's own claim: the dispatch moves it on to this ply in its transaction.
        driver.handed_off = True
        call_dispatch(call, renew=True)
        return 0
    if not lease_claim(turn, driver, hold_for=_call_hold(call, pooled=driver.pool)):
        return 0
    if driver.pool:
        driver.handed_off = True
        call_dispatch(call)
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
    """Seconds the match's claim must last for the call: its wait to be sent, the bot's
    time and the recording of the answer."""
    wait = settings.BOTS_CALL_SEND_WITHIN if pooled else 0.0
    return wait + call["time_limit"] + LEASE_GRACE


def call_dispatch(call: dict, *, renew: bool = False) -> None:
    """Queue the call on the I/O pool, if its owner has calls to spare; else look again in
    ``SHARE_RETRY`` seconds. Nothing is sent when the match's claim is no longer the
    call's (the match moved on, or another driver took it after the claim lapsed). With
    ``renew``, the call's driver holds the claim from an earlier ply, and it is moved on
    to the call's ply here."""
    from bots.tasks import bot_call, bot_call_dispatch

    now = timezone.now()
    with transaction.atomic():
        # The owner's row is the share's lock: two workers dispatching calls of one owner at
        # once count one after the other, so the share is never exceeded.
        list(get_user_model().objects.select_for_update().filter(pk=call["owner_id"]).values("pk"))
        in_flight = (
            BotTurnLease.objects.filter(calling_owner_id=call["owner_id"], expires_at__gt=now)
            .exclude(match_id=call["match_id"])
            .count()
        )
        allowed = in_flight < settings.BOTS_CALLS_PER_OWNER
        hold = _call_hold(call, pooled=True) if allowed else SHARE_RETRY + LEASE_GRACE
        claim = BotTurnLease.objects.filter(match_id=call["match_id"], holder=call["holder"])
        if not renew:
            claim = claim.filter(ply=call["ply"])
        kept = claim.update(
            ply=call["ply"],
            calling_owner_id=call["owner_id"] if allowed else None,
            expires_at=now + timedelta(seconds=hold),
        )
    if not kept:
        return
    if allowed:
        call = {**call, "send_by": time.time() + settings.BOTS_CALL_SEND_WITHIN}
        bot_call.apply_async((call,), queue=settings.BOTS_CALL_QUEUE)
    else:
        bot_call_dispatch.apply_async((call,), countdown=SHARE_RETRY)


def call_make(call: dict) -> dict:
    """Send the call's request and return the answer as JSON; no database.

    Return ``{"late": true}`` without sending when the call waited past its ``send_by``:
    the match's claim may have lapsed meanwhile, and the turn is queued anew.
    """
    if call["send_by"] is not None and time.time() > call["send_by"]:
        return {"late": True}
    limit = call["time_limit"]
    sent_at = time.time()
    payload = request_timed(
        call["payload"], deadline=datetime.fromtimestamp(sent_at + limit, UTC), time_limit=limit
    )
    answer = bot_caller().request_move(call["url"], call["secret"], payload, limit)
    return {
        "move": answer.move,
        "fault": None if answer.fault is None else str(answer.fault),
        "detail": answer.detail,
        "sent_at": sent_at,
        "answered_at": sent_at + answer.elapsed,
    }


def answer_play(call: dict, answer: dict) -> bool:
    """Play the bot's answer to the call, or forfeit its seat with the fault; return
    whether a move was made (then the driver plays on with the call's claim, which is let
    go otherwise).

    An answer whose call no longer holds the match's claim is dropped: another driver
    took the match after the claim lapsed and asks the bot again.
    """
    from games import errors as match_errors
    from games.play import ArenaMove, match_moves_append

    if answer.get("late"):
        call_dispatch(call)
        return False
    match_id, ply, seat, bot_id = call["match_id"], call["ply"], call["seat"], call["bot_id"]
    if answer["fault"] is not None:
        if not _call_end(call):
            return False
        bot_forfeit(
            match_id=match_id, seat=seat, ply=ply, bot_id=bot_id,
            code=answer["fault"], detail=answer["detail"],
        )  # fmt: skip
        lease_release(match_id, call["holder"])
        return False
    move = ArenaMove(
        seat=seat,
        move=answer["move"],
        received_at=_moment(answer["answered_at"]),
        idempotency_key=bot_move_key(bot_id, ply),
        queued_at=_moment(call["queued_at"]),
        sent_at=_moment(answer["sent_at"]),
    )
    try:
        with transaction.atomic():
            if not _call_end(call):
                return False
            # Not held to the match's deadline: the call itself ended within the bot's
            # time, counted from its send; the arena's delay before the send is not the
            # bot's.
            match_moves_append(match_id=match_id, ply=ply, moves=[move])
    except match_errors.IllegalMoveError as exc:
        bot_forfeit(
            match_id=match_id, seat=seat, ply=ply, bot_id=bot_id,
            code=Fault.ILLEGAL_MOVE, detail=str(exc),
        )  # fmt: skip
        lease_release(match_id, call["holder"])
        return False
    except TURN_GONE:
        lease_release(match_id, call["holder"])
        return False
    if call["recovers"]:
        with transaction.atomic():
            bot_health_record(bot_id=bot_id, ok=True)
    return True


def _call_end(call: dict) -> bool:
    """Mark the call over (its owner's share is free again) while its claim holds the
    match; return False when it no longer does."""
    claim = BotTurnLease.objects.filter(
        match_id=call["match_id"], holder=call["holder"], ply=call["ply"]
    )
    grace = timezone.now() + timedelta(seconds=LEASE_GRACE)
    return bool(claim.update(calling_owner_id=None, expires_at=grace))


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
