"""Precompiled SQL for the hot path of play: reading a match, appending a move.

A client playing as fast as it can reads its view and sends its move, and each of those
requests makes a few single-row queries. Building the SQL of one such query through the
ORM costs about 0.3-0.5 ms of CPU, several times what the database spends running it, so
these few statements are written out once per connection and then only executed. Values
still pass through Django's own field conversions (``get_db_prep_save`` on the way in,
``get_db_converters`` on the way out), so each function reads and writes exactly what
the ORM would, on SQLite and on PostgreSQL. Everything else uses the ORM.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, connections

from cardserver.sql import RowQuery
from games.models import Match, Move, Seat

# Per connection: statement name -> SQL.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

_MATCH = RowQuery(Match, "WHERE {table}.id = %s")
_MATCH_FOR_UPDATE = RowQuery(Match, "WHERE {table}.id = %s", for_update=True)
# The same with the snapshot only when the row is not at a given ply: for a match whose
# state at that ply this process keeps (``games.selectors.match_state_known``).
_MATCH_FOR_UPDATE_UNLESS_AT = RowQuery(
    Match,
    "WHERE {table}.id = %s",
    for_update=True,
    only=tuple(f.attname for f in Match._meta.concrete_fields if f.name != "snapshot"),
    annotations={
        "_snapshot_sent": 'CASE WHEN {table}."ply" = %s THEN NULL ELSE {table}."snapshot" END'
    },
)


def _statements() -> dict:
    # The connection wrapper is per thread; its statements are cached on it.
    wrapper = connections[DEFAULT_DB_ALIAS]
    try:
        return _CACHE[wrapper]
    except KeyError:
        return _CACHE.setdefault(wrapper, {})


def _qn(name: str) -> str:
    return connections[DEFAULT_DB_ALIAS].ops.quote_name(name)


def match_row(
    match_id: int, *, for_update: bool = False, snapshot_unless_at: int | None = None
) -> Match | None:
    """Return the match with every column, or None; ``for_update`` locks its row.

    With ``snapshot_unless_at`` (and ``for_update``), the snapshot is left out (deferred:
    read by a query of its own if used) when the row is at that ply, and read with the
    rest otherwise: one round trip either way.

    ``for_update`` must be used inside a transaction. On SQLite, which has no row locks,
    the settings' ``BEGIN IMMEDIATE`` already holds the database's write lock.
    """
    if not for_update:
        return _MATCH.one([match_id])
    if snapshot_unless_at is None:
        return _MATCH_FOR_UPDATE.one([match_id])
    match = _MATCH_FOR_UPDATE_UNLESS_AT.one([snapshot_unless_at, match_id])
    if match is not None:
        sent = match.__dict__.pop("_snapshot_sent")
        if sent is not None:
            field = Match._meta.get_field("snapshot")
            connection = connections[DEFAULT_DB_ALIAS]
            match.snapshot = field.from_db_value(sent, None, connection)
    return match


def match_progress(match_id: int) -> tuple[int, str, int | None] | None:
    """Return the match's ``(ply, status, to_move)``, or None: what a long-poll watches."""
    statements = _statements()
    if "progress" not in statements:
        statements["progress"] = (
            f"SELECT {_qn('ply')}, {_qn('status')}, {_qn('to_move')} "
            f"FROM {_qn(Match._meta.db_table)} WHERE {_qn('id')} = %s"
        )
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(statements["progress"], [match_id])
        return cursor.fetchone()


def seat_indices(match_id: int, user_id: int) -> list[int]:
    """Return the seats of the match held by the user, directly or through a client bot."""
    statements = _statements()
    if "seats" not in statements:
        # The bot table is the one Seat.bot refers to: games does not import bots.
        bot_model = Seat._meta.get_field("bot").related_model
        seat, bot = _qn(Seat._meta.db_table), _qn(bot_model._meta.db_table)
        statements["seats"] = (
            f"SELECT s.{_qn('index')} FROM {seat} s LEFT JOIN {bot} b ON b.{_qn('id')} = "
            f"s.{_qn('bot_id')} WHERE s.{_qn('match_id')} = %s AND (s.{_qn('user_id')} = %s "
            f"OR b.{_qn('account_id')} = %s) ORDER BY s.{_qn('index')}"
        )
    sql = statements["seats"]
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, [match_id, user_id, user_id])
        return [index for (index,) in cursor.fetchall()]


def move_insert(moves: Sequence[Move]) -> None:
    """INSERT the moves in one statement (their ``id`` stays unset: nothing on the hot
    path needs it)."""
    key = ("move_insert", len(moves))
    statements = _statements()
    if key not in statements:
        fields = [f for f in Move._meta.concrete_fields if not f.primary_key]
        columns = ", ".join(_qn(f.column) for f in fields)
        row = "(" + ", ".join(["%s"] * len(fields)) + ")"
        statements[key] = (
            f"INSERT INTO {_qn(Move._meta.db_table)} ({columns}) VALUES "
            + ", ".join([row] * len(moves)),
            fields,
        )
    sql, fields = statements[key]
    connection = connections[DEFAULT_DB_ALIAS]
    params = [
        f.get_db_prep_save(getattr(move, f.attname), connection) for move in moves for f in fields
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def match_update(match: Match, field_names: Sequence[str]) -> None:
    """UPDATE the named columns of the match's row from the instance."""
    key = ("match_update", tuple(field_names))
    statements = _statements()
    if key not in statements:
        fields = [Match._meta.get_field(name) for name in field_names]
        assignments = ", ".join(f"{_qn(f.column)} = %s" for f in fields)
        statements[key] = (
            f"UPDATE {_qn(Match._meta.db_table)} SET {assignments} WHERE {_qn('id')} = %s",
            fields,
        )
    sql, fields = statements[key]
    params = [
        f.get_db_prep_save(getattr(match, f.attname), connections[DEFAULT_DB_ALIAS]) for f in fields
    ]
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, [*params, match.pk])
