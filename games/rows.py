"""Precompiled SQL for the hot path of play: reading a match, appending a move.

A client playing as fast as it can reads its view and sends its move, and each of those
requests makes a few single-row queries. Building the SQL of one such query through the
ORM costs about 0.3-0.5 ms of CPU, several times what the database spends running it, so
these few statements are written out once per connection and then only executed. Values
still pass through Django's own field conversions (``get_db_prep_save`` on the way in,
``get_db_converters`` on the way out), so each function reads and writes exactly what
the ORM would, on SQLite and on PostgreSQL. Everything else uses the ORM. How the SQL is
written once and kept is ``cardserver.sql``'s; the statements of play are here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial

from django.db import DEFAULT_DB_ALIAS, connections

from cardserver.sql import (
    RowQuery,
    compiled,
    insert_params,
    insert_statement,
    numbered,
    update_params,
    update_statement,
)
from games.models import Match, Move, Seat

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
    ahead = _LOCKED_AHEAD.get()
    if ahead is not None and match_id in ahead:
        return ahead.pop(match_id)
    if snapshot_unless_at is None:
        return _MATCH_FOR_UPDATE.one([match_id])
    match = _MATCH_FOR_UPDATE_UNLESS_AT.one([snapshot_unless_at, match_id])
    return None if match is None else _snapshot_sent_set(match)


def _snapshot_sent_set(match: Match) -> Match:
    """Set the snapshot that a read ``unless at`` a ply sent (it stays deferred if not)."""
    sent = match.__dict__.pop("_snapshot_sent")
    if sent is not None:
        field = Match._meta.get_field("snapshot")
        match.snapshot = field.from_db_value(sent, None, connections[DEFAULT_DB_ALIAS])
    return match


# The rows that ``matches_locked_ahead`` locked and read, by id, until ``match_row``
# takes each (once).
_LOCKED_AHEAD: ContextVar[dict[int, Match] | None] = ContextVar("locked_ahead", default=None)
# The locked reads of several matches, by how many (the parameters: each match and its
# ply, then the matches).
_MATCHES_AHEAD: dict[int, RowQuery] = {}


@contextmanager
def matches_locked_ahead(plies_known: dict[int, int | None]) -> Iterator[None]:
    """Lock and read the rows of the matches (ids, each with the ply at which the
    caller keeps its state, or None) in one statement, ordered by id; inside the block,
    ``match_row(id, for_update=True)`` takes each of these rows once instead of a
    locked read of its own, the snapshot left out where the row is at the ply given.

    Must be used inside the transaction that the block's writes run in, and only where
    nothing writes those rows in the block before ``match_row`` takes them (a row taken
    is the caller's to write): then each row is as a locked read of its own would find it.
    """
    count = len(plies_known)
    query = _MATCHES_AHEAD.get(count)
    if query is None:
        query = _MATCHES_AHEAD[count] = _matches_ahead_query(count)
    ids = sorted(plies_known)
    plies = [-1 if plies_known[i] is None else plies_known[i] for i in ids]
    params = [value for pair in zip(ids, plies, strict=True) for value in pair] + ids
    rows = {match.pk: _snapshot_sent_set(match) for match in query.all(params)}
    writes: list[tuple[Sequence[Move], Match, tuple[str, ...]]] = []
    token, writes_token = _LOCKED_AHEAD.set(rows), _WRITES_LATER.set(writes)
    try:
        yield
        _writes_flush(writes)
    finally:
        _LOCKED_AHEAD.reset(token)
        _WRITES_LATER.reset(writes_token)


# The writes that ``moves_insert_match_update`` left, in a block of
# ``matches_locked_ahead``, for one statement at its end: (moves, match, field names).
_WRITES_LATER: ContextVar[list | None] = ContextVar("writes_later", default=None)


def _writes_flush(writes: list[tuple[Sequence[Move], Match, tuple[str, ...]]]) -> None:
    """Write the moves and matches left for later: one statement for those of each set of
    field names (one set, in the I/O pool)."""
    by_names: dict[tuple[str, ...], list] = {}
    for moves, match, names in writes:
        by_names.setdefault(names, []).append((moves, match))
    connection = connections[DEFAULT_DB_ALIAS]
    for names, group in by_names.items():
        moves = [move for moves, _match in group for move in moves]
        counts = (len(moves), len(group), names)
        sql, move_fields, match_fields = compiled(
            ("games.moves_insert_matches_update", *counts), partial(_writes_sql, counts=counts)
        )
        params = insert_params(moves, move_fields, connection)
        for _moves, match in group:
            params += update_params(match, match_fields, connection)
        # Its placeholders are numbered once a shape (``_writes_sql``, kept by ``compiled``):
        # psycopg would parse a statement of this many parameters again at every
        # execution (docs/turn-cost.md).
        with connection.numbered_cursor() as cursor:
            cursor.execute(sql, params)


def _writes_sql(connection, *, counts: tuple[int, int, tuple[str, ...]]):
    """The INSERT of ``move_count`` moves in a data-modifying WITH of the UPDATE of
    ``match_count`` matches' named columns from a VALUES list (PostgreSQL), each row's
    values as ``update_params`` gives them (the primary key last); its placeholders
    numbered (``$1``...), for the connection's ``numbered_cursor``."""
    move_count, match_count, names = counts
    quote = connection.ops.quote_name
    insert, move_fields = insert_statement(Move, move_count, connection)
    match_fields = [Match._meta.get_field(name) for name in names]
    columns = [*match_fields, Match._meta.pk]
    # Typed, so that PostgreSQL need not guess the columns of VALUES from its parameters.
    row = "(" + ", ".join(f"%s::{field.db_type(connection)}" for field in columns) + ")"
    aliases = ", ".join(f"c{index}" for index in range(len(columns)))
    table = quote(Match._meta.db_table)
    assignments = ", ".join(f"{quote(f.column)} = v.c{i}" for i, f in enumerate(match_fields))
    sql = (
        f"WITH {quote('moved')} AS ({insert}) UPDATE {table} SET {assignments} "
        f"FROM (VALUES {', '.join([row] * match_count)}) AS v({aliases}) "
        f"WHERE {table}.{quote(Match._meta.pk.column)} = v.c{len(match_fields)}"
    )
    return numbered(sql), move_fields, match_fields


def _matches_ahead_query(count: int) -> RowQuery:
    # The ply at which each match's snapshot is left out, by id: a CASE, so that the
    # statement is the same on SQLite (no arrays) and PostgreSQL.
    plies = " ".join(["WHEN %s THEN CAST(%s AS integer)"] * count)
    ids = ", ".join(["%s"] * count)
    return RowQuery(
        Match,
        f"WHERE {{table}}.id IN ({ids}) ORDER BY {{table}}.id",
        for_update=True,
        only=_MATCH_FOR_UPDATE_UNLESS_AT.only,
        annotations={
            "_snapshot_sent": f'CASE WHEN {{table}}."ply" = (CASE {{table}}.id {plies} END) '
            'THEN NULL ELSE {table}."snapshot" END'
        },
    )


def match_progress(match_id: int) -> tuple[int, str, int | None] | None:
    """Return the match's ``(ply, status, to_move)``, or None: what a long-poll watches."""
    sql = compiled("games.match_progress", _progress_sql)
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, [match_id])
        return cursor.fetchone()


def _progress_sql(connection) -> str:
    qn = connection.ops.quote_name
    return (
        f"SELECT {qn('ply')}, {qn('status')}, {qn('to_move')} "
        f"FROM {qn(Match._meta.db_table)} WHERE {qn('id')} = %s"
    )


def seat_indices(match_id: int, user_id: int) -> list[int]:
    """Return the seats of the match held by the user, directly or through a client bot."""
    sql = compiled("games.seat_indices", _seats_sql)
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, [match_id, user_id, user_id])
        return [index for (index,) in cursor.fetchall()]


def _seats_sql(connection) -> str:
    qn = connection.ops.quote_name
    # The bot table is the one Seat.bot refers to: games does not import bots.
    bot_model = Seat._meta.get_field("bot").related_model
    seat, bot = qn(Seat._meta.db_table), qn(bot_model._meta.db_table)
    return (
        f"SELECT s.{qn('index')} FROM {seat} s LEFT JOIN {bot} b ON b.{qn('id')} = "
        f"s.{qn('bot_id')} WHERE s.{qn('match_id')} = %s AND (s.{qn('user_id')} = %s "
        f"OR b.{qn('account_id')} = %s) ORDER BY s.{qn('index')}"
    )


def move_insert(moves: Sequence[Move]) -> None:
    """INSERT the moves in one statement (their ``id`` stays unset: nothing on the hot
    path needs it)."""
    sql, fields = _move_insert_sql(len(moves))
    connection = connections[DEFAULT_DB_ALIAS]
    with connection.cursor() as cursor:
        cursor.execute(sql, insert_params(moves, fields, connection))


def match_update(match: Match, field_names: Sequence[str]) -> None:
    """UPDATE the named columns of the match's row from the instance."""
    sql, fields = _match_update_sql(field_names)
    connection = connections[DEFAULT_DB_ALIAS]
    with connection.cursor() as cursor:
        cursor.execute(sql, update_params(match, fields, connection))


def moves_insert_match_update(
    moves: Sequence[Move], match: Match, field_names: Sequence[str], *, later: bool = False
) -> None:
    """``move_insert`` then ``match_update``, in one statement on PostgreSQL (the INSERT
    in a data-modifying WITH of the UPDATE): one round trip a move where there were two.
    Either fails whole, with the error either would raise. Elsewhere (SQLite has no
    INSERT in a WITH), the two statements.

    With ``later``, for a match read by ``matches_locked_ahead`` in its block (on
    PostgreSQL): written with the block's other matches in one statement when it ends,
    where any error is raised; nothing in the block may read these rows before."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        move_insert(moves)
        match_update(match, field_names)
        return
    count, names = len(moves), tuple(field_names)
    writes = _WRITES_LATER.get()
    if later and writes is not None:
        writes.append((moves, match, names))
        return

    def build(connection) -> tuple[str, list, list]:
        insert, move_fields = insert_statement(Move, count, connection)
        update, match_fields = update_statement(Match, names, connection)
        moved = connection.ops.quote_name("moved")
        return f"WITH {moved} AS ({insert}) {update}", move_fields, match_fields

    sql, move_fields, match_fields = compiled(
        ("games.moves_insert_match_update", count, names), build
    )
    params = insert_params(moves, move_fields, connection)
    params += update_params(match, match_fields, connection)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _move_insert_sql(count: int) -> tuple[str, list]:
    return compiled(
        ("games.move_insert", count), lambda connection: insert_statement(Move, count, connection)
    )


def _match_update_sql(field_names: Sequence[str]) -> tuple[str, list]:
    names = tuple(field_names)
    return compiled(
        ("games.match_update", names),
        lambda connection: update_statement(Match, names, connection),
    )
