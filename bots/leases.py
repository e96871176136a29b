"""The claim on a match that a bot-turn driver holds (``BotTurnLease``), in one place:
taking and keeping it (``lease_claim``), letting go (``lease_release``), how long it
lasts, the SQL that the calls' hot path moves it with, and what a lapse says failed.

A claim lapses if its driver dies, so another driver can take the match up from its move
log; the driver takes a lapsed claim over (``lease_claim``) and gives the match up with
``lapse_cause`` as its reason after too many lapses at one ply. A claim written already
lapsed (``lease_lapsed_mark``) is left for the sweep (``bots.tasks.resume_abandoned_turns``)
when a turn's notice could not be sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Protocol

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from bots.models import BotTurnLease
from cardserver.sql import compiled

logger = logging.getLogger(__name__)

# Seconds a claim on a match outlasts the time its bot to move may take: enough to
# record the move or the forfeit after the call. A built-in bot decides in well under a
# second; its driver renews the claim whenever half of it has passed, so the claim of a
# driver that died lapses within BUILTIN_LEASE seconds, and the sweep for lapsed claims
# (bots.tasks.resume_abandoned_turns) hands the match to another.
LEASE_GRACE = 5.0
BUILTIN_LEASE = 10.0

# The I/O pool's heartbeat: every CALL_BEAT seconds it renews the claims of its calls in
# flight to CALL_HELD seconds from then, so that a pool process that dies lets go of its
# matches within CALL_HELD seconds whatever the bots' time limits (the sweep then hands
# them to a driver again: bots.tasks.resume_abandoned_turns).
CALL_BEAT = 3.0
CALL_HELD = 10.0


class TurnAt(Protocol):
    """The turn a claim is for (``bots.driver.BotTurn``)."""

    match_id: int
    ply: int


class Claimant(Protocol):
    """Who claims a match (``bots.driver.Driver``): its holder name, and whether and until
    when (``time.monotonic()``) it holds its claim."""

    holder: str
    claimed: bool
    claimed_until: float


def lease_claim(
    turn: TurnAt, driver: Claimant, *, hold_for: float, keep_if_left: float | None = None
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
    given_up = None
    with transaction.atomic():
        leases = BotTurnLease.objects.filter(match_id=turn.match_id)
        taken = leases.filter(holder=holder).update(ply=turn.ply, expires_at=expires_at)
        if not taken:
            lapsed = leases.filter(expires_at__lte=now).select_for_update().first()
            if lapsed is not None:
                # Its holder stopped renewing it: the one evidence that a worker died.
                lapses = lapsed.lapses + 1 if lapsed.ply == turn.ply else 1
                if lapsed.holder == NOTICE_LOST:
                    lapses -= 1  # no worker died: its notice was lost with the broker
                if lapses > settings.BOTS_TURN_MAX_LAPSES:
                    given_up = lapse_cause(lapsed, lapses)
                    lapsed.delete()
                else:
                    logger.warning(
                        "match %s: took over a lapsed claim (%s)", turn.match_id,
                        lapse_cause(lapsed, lapses), extra={"match_id": turn.match_id},
                    )  # fmt: skip
                    leases.filter(pk=lapsed.pk).update(
                        holder=holder, ply=turn.ply, expires_at=expires_at,
                        calling_owner=None, lapses=lapses,
                    )  # fmt: skip
                    taken = 1
        if not taken and given_up is None:
            if leases.exists():
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
    if given_up is not None:
        from games.match_endings import match_abort

        match_abort(match_id=turn.match_id, code="arena", detail=f"the arena gave up: {given_up}")
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


def lapse_cause(lease: BotTurnLease, lapses: int) -> str:
    """Say what failed, from a claim that lapsed: who held it, at which ply, how often."""
    if lease.holder == NOTICE_LOST:
        what = "its turn notice could not be sent"
    elif lease.calling_owner_id is not None:
        what = "the I/O pool's worker (bot-calls) calling an HTTP bot stopped renewing its claim"
    else:
        what = "the worker playing its turn stopped renewing its claim"
    times = "" if lapses <= 1 else f" ({lapses} times in a row)"
    return f"{what} at ply {lease.ply}{times}; no bot is at fault"


# The holder of a claim written already lapsed when the turn's notice could not be sent
# (``bots.tasks.match_changed_handle``): the sweep takes the turn up as a dead worker's.
NOTICE_LOST = "notice-lost"


def lease_lapsed_mark(*, match_id: int, ply: int) -> None:
    """Leave the match a lapsed claim at ``ply`` (unless one is held), so that the sweep
    for dead workers' turns hands it to a driver (``resume_abandoned_turns``)."""
    now = timezone.now()
    with transaction.atomic():
        if not BotTurnLease.objects.filter(match_id=match_id).exists():
            try:
                with transaction.atomic():
                    BotTurnLease.objects.create(
                        match_id=match_id, holder=NOTICE_LOST, ply=ply, expires_at=now
                    )
            except IntegrityError:
                pass


# The dispatch and the end of a call run at every HTTP bot's turn: their SQL is written
# once per connection (the ORM's compiling cost more than PostgreSQL's answering).
def lease_statements(conn) -> dict[str, str]:
    """Return the claim's statements for the database of ``conn``, written once per
    connection (``cardserver.sql.compiled``)."""
    return compiled("bots.lease_statements", _lease_statements_write, using=conn.alias)


def _lease_statements_write(connection) -> dict[str, str]:
    quote = connection.ops.quote_name
    lease = quote(BotTurnLease._meta.db_table)
    users = quote(get_user_model()._meta.db_table)
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    return {
        "owner_lock": f"SELECT {quote('id')} FROM {users} WHERE {quote('id')} = %s{lock}",
        "owner_calls": (
            f"SELECT COUNT(*) FROM {lease} WHERE {quote('calling_owner_id')} = %s "
            f"AND {quote('expires_at')} > %s AND {quote('match_id')} <> %s"
        ),
        "claim_move_on": (
            f"UPDATE {lease} SET {quote('ply')} = %s, {quote('calling_owner_id')} = %s, "
            f"{quote('expires_at')} = %s WHERE {quote('match_id')} = %s "
            f"AND {quote('holder')} = %s"
        ),
        "at_ply": f" AND {quote('ply')} = %s",
        "call_renew": (
            f"UPDATE {lease} SET {quote('expires_at')} = %s WHERE {quote('match_id')} = %s "
            f"AND {quote('holder')} = %s AND {quote('ply')} = %s "
            f"AND {quote('calling_owner_id')} IS NOT NULL AND {quote('expires_at')} < %s"
        ),
        "call_end": (
            f"UPDATE {lease} SET {quote('calling_owner_id')} = NULL, "
            f"{quote('expires_at')} = %s WHERE {quote('match_id')} = %s "
            f"AND {quote('holder')} = %s AND {quote('ply')} = %s"
        ),
    }


class ClaimLost(Exception):
    """The match's claim is no longer the driver's (it lapsed and another driver took it):
    what the driver did in this transaction must be undone."""


# The claims moved on in a block of ``claims_moved_on_together``: each ``claim_move_on``'s
# values.
_MOVED_ON: ContextVar[list[list] | None] = ContextVar("claims_moved_on", default=None)


@contextmanager
def claims_moved_on_together() -> Iterator[None]:
    """Write the claims moved on in this block (``claim_moved_on_later``) in one statement
    when it ends, and raise ClaimLost if any of them was no longer held by its driver.

    For the I/O pool, which records the answers that came at once in one transaction: one
    statement for every answer's next call, where each had its own. Use it inside that
    transaction, so that ClaimLost undoes it whole (each answer is then recorded on its
    own, its claim checked by its own write).
    """
    moved: list[list] = []
    token = _MOVED_ON.set(moved)
    try:
        yield
        if moved:
            with connection.cursor() as cursor:
                cursor.execute(
                    claims_move_on_statement(connection, len(moved)),
                    [value for values in moved for value in values],
                )
                held = {match_id for (match_id,) in cursor.fetchall()}
            # Two calls of one match among them count as a claim lost: undone, each alone.
            if len(held) < len(moved):
                lost = [values[3] for values in moved if values[3] not in held]
                raise ClaimLost(lost[0] if lost else moved[0][3])
    finally:
        _MOVED_ON.reset(token)


def claim_moved_on_later(values: list) -> bool:
    """Keep a claim's move on (``claim_move_on``'s values) for the statement of the
    ``claims_moved_on_together`` block around it (on PostgreSQL) and return True; return
    False outside one (the caller writes it, and finds at once whether it was held)."""
    moved = _MOVED_ON.get()
    if moved is None or connection.vendor != "postgresql":
        return False
    moved.append(values)
    return True


def claims_move_on_statement(conn, count: int) -> str:
    """Return ``claim_move_on`` for ``count`` claims in one statement (PostgreSQL only),
    each claim's values in the order of ``claim_move_on``'s, one after another; it
    returns the match of each claim it found held."""
    return compiled(
        ("bots.claims_move_on", count),
        lambda connection: _claims_move_on_write(connection, count),
        using=conn.alias,
    )


def _claims_move_on_write(connection, count: int) -> str:
    quote = connection.ops.quote_name
    lease = quote(BotTurnLease._meta.db_table)
    ply, owner, expires = quote("ply"), quote("calling_owner_id"), quote("expires_at")
    match, holder = quote("match_id"), quote("holder")
    # Typed, so that PostgreSQL need not guess the columns of VALUES from its parameters.
    row = "(%s::integer, %s::bigint, %s::timestamptz, %s::bigint, %s::text)"
    return (
        f"UPDATE {lease} SET {ply} = v.ply, {owner} = v.owner, {expires} = v.until "
        f"FROM (VALUES {', '.join([row] * count)}) AS v(ply, owner, until, match, holder) "
        f"WHERE {lease}.{match} = v.match AND {lease}.{holder} = v.holder "
        f"RETURNING {lease}.{match}"
    )


def db_time(moment: datetime):
    """Return ``moment`` as the default database takes a datetime parameter."""
    return connection.ops.adapt_datetimefield_value(moment)
