"""The I/O pool of a ``bot-calls`` process: every call in flight on one event loop, and a
few recording threads that record the answers (``bots.calls`` makes and plays the calls).

A recording thread takes up to ``BOTS_CALL_ANSWERS_PER_COMMIT`` answers that are ready at
once and appends their moves in one transaction, with one commit: at capacity the queue
of answers sits in front of the recording threads, and a transaction's own round trips
(its BEGIN and COMMIT) were a fifth of a recording's. If anything in that transaction
fails (one bot's illegal move, a turn gone meanwhile, the commit itself), it is rolled
back whole and each of its answers is recorded again on its own, as a single answer
always is: so one bad answer never costs another its move, and no move is recorded
twice (each is idempotent by its claim and ply). The next calls are sent and the moves
announced only after the commit that recorded them.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import queue
import threading
import time
from datetime import timedelta

from celery import Task, shared_task
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from bots.calls import (
    answer_play_on,
    answer_recovered,
    call_dispatch,
    call_make_async,
    move_record,
    share_member,
    share_release,
)
from bots.leases import (
    CALL_BEAT,
    CALL_HELD,
    claims_moved_on_together,
    db_time,
    lease_statements,
)
from bots.share import owner_shares
from cardkit.caller import AsyncBotCaller, loop_thread_start
from cardserver import fastjson
from games import live
from games.move_services import matches_locked

logger = logging.getLogger(__name__)

# This process's pool, once a call has come to it (``bots.tasks.bot_call``); None in the
# CPU workers, web servers and tests, which send calls on the call queue.
_POOL: CallPool | None = None
_POOL_LOCK = threading.Lock()


def current_pool() -> CallPool | None:
    """Return this process's pool, or None when it is not a pool process."""
    return _POOL


def call_pool() -> CallPool:
    """Return this process's pool, made on first use (it makes this a pool process)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            collector_settle()
            _POOL = CallPool()
        return _POOL


def collector_settle() -> None:
    """Keep the objects this process has made so far (Django, Celery, the apps: some
    150,000, all living as long as the process) out of the garbage collector's reach, and
    let a turn's objects die young, as the web processes do (``cardserver.asgi``).

    Each full collection walked them all, a hundred milliseconds, several times a minute
    at 200 matches, and the young generation of 700 allocations promoted the objects of
    the calls in flight at nearly every collection: the collector took about a seventh of
    the recording's CPU (docs/turn-cost.md). The oldest generation keeps Python's 10
    middle collections between two full ones, which free the reference cycles that nothing
    else does."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)


def call_send(call: dict) -> None:
    """Hand a dispatched call to the I/O pool: straight to this process's pool when it is
    one, else on the call queue (``bot_call``). Handed to ``bots.calls`` by
    ``BotsConfig.ready`` (``calls.pool_connect``)."""
    pool = current_pool()
    if pool is not None:
        # Sent once the claim's move is committed (the pool dispatches in the answer's
        # transaction), so that its answer never waits for that commit.
        transaction.on_commit(functools.partial(pool.submit, call))
    else:
        bot_call.apply_async((call,), queue=settings.BOTS_CALL_QUEUE)


# Named as the task of bots.tasks it has always been (the routes and the workers know it by
# that name); defined here, beside the pool it feeds, and re-exported there.
@shared_task(name="bots.tasks.bot_call", acks_late=False, ignore_result=True)
def bot_call(call: dict) -> None:
    """Hand one HTTP bot's call to this process's event loop and return: the loop waits
    for the bot, and the pool records the answer (``CallPool``)."""
    call_pool().submit(call)


# The task that plays a match's built-in bots on a CPU worker (``bots.tasks.play_bot_turns``),
# handed down by ``BotsConfig.ready``: ``bots.tasks`` builds on this module, so this one
# never imports it.
_builtin_turns: Task | None = None


def builtin_turns_connect(task: Task) -> None:
    """Hand built-in bots' turns to ``task`` (``BotsConfig.ready``: ``play_bot_turns``)."""
    global _builtin_turns
    _builtin_turns = task


class CallPool:
    """The calls of one ``bot-calls`` process: one event loop holding every call in flight
    (a coroutine each, never a thread) and ``BOTS_CALL_RECORDERS`` threads that record the
    answers in the database and play on."""

    def __init__(self) -> None:
        # orjson writes each request and reads each answer, as json would (a tenth of
        # the time): docs/turn-cost.md.
        self.caller = AsyncBotCaller(
            allow_private=settings.BOTS_ALLOW_PRIVATE_URLS,
            dumps=fastjson.dumps_compact,
            loads=fastjson.loads_or_json,
        )
        self.loop = loop_thread_start("bot-calls")
        # Ready answers, (call, answer), and the heartbeat's renewals, (None, claims).
        self._ready: queue.SimpleQueue = queue.SimpleQueue()
        for number in range(settings.BOTS_CALL_RECORDERS):
            threading.Thread(
                target=self._record, name=f"bot-answers-{number}", daemon=True
            ).start()
        self.in_flight = 0
        # The tasks running, so that none is collected while it waits.
        self._tasks: set[asyncio.Task] = set()
        # The claims of the calls in flight (match, holder, ply), which the heartbeat renews:
        # their owners, whose shares it renews, and until when the dispatch held the claim.
        self._claims: dict[tuple[int, str, int], tuple[int, float]] = {}
        self.loop.call_soon_threadsafe(self.loop.call_later, CALL_BEAT, self._beat)

    def submit(self, call: dict) -> None:
        """Make the call on the loop; its answer is recorded by a recording thread.
        Thread-safe; returns at once."""
        self.loop.call_soon_threadsafe(self._start, call)

    def _start(self, call: dict) -> None:
        task = self.loop.create_task(self._make(call))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _beat(self) -> None:
        """Renew the claims of the calls in flight that are due (on a recording thread),
        every CALL_BEAT seconds."""
        claims = claims_due(self._claims, time.time())
        if claims:
            self._ready.put((None, claims))
        self.loop.call_later(CALL_BEAT, self._beat)

    async def _make(self, call: dict) -> None:
        self.in_flight += 1
        claim = (call["match_id"], call["holder"], call["ply"])
        # A call queued by an older dispatch says nothing of its claim: renewed at every beat.
        self._claims[claim] = (call["owner_id"], call.get("claim_until", 0.0))
        try:
            answer = await call_make_async(call, self.caller)
        except Exception:
            # A bug, not the bot's fault: the call is lost, and its turn taken up again
            # when the match's claim lapses.
            logger.exception("bot call for match %s failed", call["match_id"])
            return
        finally:
            self.in_flight -= 1
            self._claims.pop(claim, None)
        self._ready.put((call, answer))

    def _record(self) -> None:
        """A recording thread: take the answers ready (up to a commit's worth) and record
        them; run the heartbeat's renewals as they come."""
        most = settings.BOTS_CALL_ANSWERS_PER_COMMIT
        while True:
            taken = [self._ready.get()]
            while len(taken) < most:
                try:
                    taken.append(self._ready.get_nowait())
                except queue.Empty:
                    break
            answers = []
            for call, item in taken:
                if call is None:
                    claims_renew(item)
                else:
                    answers.append((call, item))
            if answers:
                try:
                    answers_record(answers)
                except Exception:
                    # Not to end the thread: the claims lapse and the turns are taken up.
                    logger.exception("recording %s answers failed", len(answers))


def claims_due(
    claims: dict[tuple[int, str, int], tuple[int, float]], now: float
) -> dict[tuple[int, str, int], int]:
    """The claims, with their owners, that the heartbeat renews at ``now`` (time.time()):
    those that their dispatch held until less than CALL_HELD seconds (and one to spare)
    from now. Renewing the others would change nothing, as the renewal never shortens a
    claim; with bots that answer within the send window that was a statement a call in
    flight at every beat, a third of one a turn (docs/turn-cost.md)."""
    due = now + CALL_HELD + 1.0
    return {claim: owner for claim, (owner, until) in claims.items() if until < due}


def claims_renew(claims: dict[tuple[int, str, int], int]) -> None:
    """Make the claims of these calls in flight (and their owners' shares) last CALL_HELD
    seconds from now (never shorter), where the call still holds its match's claim."""
    from django.db import close_old_connections

    close_old_connections()
    held = db_time(timezone.now() + timedelta(seconds=CALL_HELD))
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                lease_statements(connection)["call_renew"],
                [[held, match_id, holder, ply, held] for match_id, holder, ply in claims],
            )
        shares = owner_shares()
        if shares is not None:
            members = [(owner, share_member(m, holder)) for (m, holder, _), owner in claims.items()]
            shares.renew(members, hold=CALL_HELD)
    except Exception:
        # The next beat tries again; a claim that lapses meanwhile is taken up again.
        logger.exception("renewing %s claims of calls in flight failed", len(claims))


def answers_record(answers: list[tuple[dict, dict]]) -> None:
    """Record answers that came at once (a recording thread of the pool): the good ones'
    moves in one transaction, each answer on its own when that fails; faults and late
    calls each on its own."""
    from django.db import close_old_connections

    close_old_connections()
    moves, alone = [], []
    for call, answer in answers:
        good = not answer.get("late") and answer["fault"] is None
        (moves if good else alone).append((call, answer))
    # Counted in the database, an owner's share is its row's lock, which one transaction
    # would hold over several owners' dispatches: then each answer has its own.
    if len(moves) < 2 or owner_shares() is None:
        moves, alone = [], answers
    for call, answer in alone:
        answer_record(call, answer)
    if moves and not _moves_record(moves):
        for call, answer in moves:
            answer_record(call, answer)


def _moves_record(moves: list[tuple[dict, dict]]) -> bool:
    """Append the moves of these good answers in one transaction and play on; return
    False, with nothing written, if any of it failed."""
    outcomes = []
    try:
        # The moves' announcements to spectators go to Redis in one round trip; their
        # matches are locked and read in one statement, and their claims moved on to the
        # next calls in another (docs/turn-cost.md).
        match_ids = [call["match_id"] for call, _answer in moves]
        with (
            live.publish_batched(),
            transaction.atomic(),
            matches_locked(match_ids=match_ids),
            claims_moved_on_together(),
        ):
            for call, answer in moves:
                outcomes.append(move_record(call, answer, play_on=True))
    except Exception as exc:
        # Each answer is recorded again on its own, where the bad one is forfeited or let go.
        logger.info("bot calls: %s answers recorded one by one (%r)", len(moves), exc)
        return False
    for (call, _answer), (match, played) in zip(moves, outcomes, strict=True):
        _played_on(call, match, played, recover=True)
    return True


def answer_record(call: dict, answer: dict) -> None:
    """Play the answer (a recording thread of the pool), then the match's next HTTP bots'
    turns; a built-in bot's turn goes to a CPU worker."""
    from django.db import close_old_connections

    close_old_connections()
    if answer.get("late"):
        call_dispatch(call)
        return
    match = played = None
    try:
        match, played = answer_play_on(call, answer, play_on=True)
    except Exception:
        # The claim lapses and the turn is taken up again (resume_abandoned_turns).
        logger.exception("recording the answer for match %s failed", call["match_id"])
    _played_on(call, match, played, recover=False)


def _played_on(call: dict, match, played, *, recover: bool) -> None:
    """After the commit of the answer's move (``match`` None when none was made): hand a
    built-in bot's turn to a CPU worker, with ``recover`` clear the bot's failures, and
    give back the call's share unless the match's next call is its owner's (then the
    share stays counted)."""
    try:
        if match is not None:
            if played.builtin_next:
                _builtin_turns.delay(call["match_id"])
            if recover:
                answer_recovered(call)
    except Exception:
        logger.exception("after recording the answer for match %s", call["match_id"])
    finally:
        if played is None or played.calling_owner != call["owner_id"]:
            share_release(call)
