"""Hand-compiled SQL, in one place: for the few queries that every API request or every bot's
turn makes.

Building the SQL of a query through the ORM costs about 0.3-0.5 ms of CPU, several times
what PostgreSQL spends answering a primary-key lookup. A ``RowQuery`` (a SELECT of a
model's rows) writes its SQL once per database connection and then only executes it; so
does ``compiled`` for any other statement, with ``insert_statement`` and
``update_statement`` writing a model's INSERT of several rows and UPDATE by primary key
(their values through ``insert_params`` and ``update_params``). The apps' statements are
declared beside their callers (``games.rows``, ``bots.leases``,
``accounts.authentication``). Values pass through the same conversions the ORM applies
(``get_db_converters`` of the backend and of each field), and rows become model instances
through ``Model.from_db``, so the result is what ``Model.objects.get`` would give, on
SQLite and PostgreSQL alike.

    TOKEN_USER = RowQuery(User, "JOIN accounts_apitoken t ON t.user_id = {table}.id "
                                "WHERE t.key_hash = %s")
    user = TOKEN_USER.one([token_hash(key)])
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, models

from cardserver import fastjson

T = TypeVar("T")

# Per connection wrapper (connections are per thread): statement key -> what was written.
_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled(key: Hashable, build: Callable[[Any], T], *, using: str = DEFAULT_DB_ALIAS) -> T:
    """Return what ``build`` writes for the connection ``using`` (a statement, or a
    statement and its fields), written at the first call of ``key`` on that connection.
    Keys are global: an app's keys start with its name."""
    connection = connections[using]
    statements = _COMPILED.get(connection)
    if statements is None:
        statements = _COMPILED.setdefault(connection, {})
    try:
        return statements[key]
    except KeyError:
        written = statements[key] = build(connection)
        return written


def insert_statement(
    model: type[models.Model], count: int, connection
) -> tuple[str, list[models.Field]]:
    """Return the INSERT of ``count`` rows of ``model`` (every column but the primary key)
    and the fields of a row's values, in order."""
    quote = connection.ops.quote_name
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(quote(f.column) for f in fields)
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES " + ", ".join(
        [row] * count
    )
    return sql, fields


def numbered(sql: str) -> str:
    """Return ``sql`` with its ``%s`` placeholders written as PostgreSQL's, ``$1``, ``$2``...
    in order, for a PostgreSQL connection's ``numbered_cursor``
    (``cardserver.postgresql``); ``%`` in any other use is refused."""
    parts = sql.split("%s")
    if any("%" in part for part in parts):
        raise ValueError(f"a % that is not a %s placeholder: {sql!r}")
    numbered_parts = [f"{part}${number}" for number, part in enumerate(parts[:-1], 1)]
    return "".join(numbered_parts) + parts[-1]


def insert_params(instances: Sequence[models.Model], fields: list, connection) -> list:
    """Return the values of ``insert_statement`` for these instances, as the ORM saves them."""
    return [
        f.get_db_prep_save(getattr(instance, f.attname), connection)
        for instance in instances
        for f in fields
    ]


def update_statement(
    model: type[models.Model], field_names: Sequence[str], connection
) -> tuple[str, list[models.Field]]:
    """Return the UPDATE of the named columns of one row of ``model``, by primary key, and
    the fields of its values, in order."""
    quote = connection.ops.quote_name
    fields = [model._meta.get_field(name) for name in field_names]
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    table = quote(model._meta.db_table)
    sql = f"UPDATE {table} SET {assignments} WHERE {quote(model._meta.pk.column)} = %s"
    return sql, fields


def update_params(instance: models.Model, fields: list, connection) -> list:
    """Return the values of ``update_statement`` for the instance, its primary key last."""
    return [f.get_db_prep_save(getattr(instance, f.attname), connection) for f in fields] + [
        instance.pk
    ]


class RowQuery:
    """``SELECT <the columns of model> FROM <its table> <tail>``, fetching one row (``one``)
    or all (``all``).

    ``tail`` may name the model's table as ``{table}`` (quoted); ``for_update`` appends
    ``FOR UPDATE`` where the database has it (not SQLite, whose ``BEGIN IMMEDIATE``
    transactions already hold the write lock).
    """

    def __init__(
        self,
        model: type[models.Model],
        tail: str,
        *,
        for_update: bool = False,
        only: tuple[str, ...] | None = None,
        annotations: Mapping[str, str] | None = None,
    ):
        self.model = model
        self.tail = tail
        self.for_update = for_update
        # With ``only``, the other columns are deferred, as with ``QuerySet.only``: reading
        # one later costs a query of its own.
        self.only = only
        # SQL expressions selected after the model's columns (``{table}`` allowed), each set
        # on the instance as the attribute of its name, unconverted, as with
        # ``QuerySet.annotate``.
        self.annotations = dict(annotations or {})
        # One compiled statement per connection wrapper (connections are per thread).
        self._compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _compile(self, connection) -> tuple[str, list[str], list[tuple]]:
        quote = connection.ops.quote_name
        meta = self.model._meta
        table = quote(meta.db_table)
        fields = meta.concrete_fields
        if self.only is not None:
            fields = [f for f in fields if f.attname in self.only or f.primary_key]
        columns = ", ".join(
            [f"{table}.{quote(f.column)}" for f in fields]
            + [expression.format(table=table) for expression in self.annotations.values()]
        )
        sql = f"SELECT {columns} FROM {table} {self.tail.format(table=table)}"
        if self.for_update and connection.features.has_select_for_update:
            sql += " FOR UPDATE"
        converters = []
        for index, field in enumerate(fields):
            column = field.get_col(meta.db_table)
            functions = connection.ops.get_db_converters(column) + [
                _fast_json(function, field) for function in field.get_db_converters(connection)
            ]
            if functions:
                converters.append((index, column, functions))
        return sql, [f.attname for f in fields], converters

    def one(self, params: Sequence, *, using: str = DEFAULT_DB_ALIAS):
        """Return the first row as a model instance, or None."""
        rows = self._fetch(params, using, many=False)
        return rows[0] if rows else None

    def all(self, params: Sequence, *, using: str = DEFAULT_DB_ALIAS) -> list:
        """Return every row, as model instances."""
        return self._fetch(params, using, many=True)

    def _fetch(self, params: Sequence, using: str, *, many: bool) -> list:
        connection = connections[using]
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(connection)
        sql, attnames, converters = compiled
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            if many:
                rows = cursor.fetchall()
            else:
                row = cursor.fetchone()
                rows = [] if row is None else [row]
        count = len(attnames)
        instances = []
        for row in rows:
            values = list(row[:count])
            for index, column, functions in converters:
                value = values[index]
                for function in functions:
                    value = function(value, column, connection)
                values[index] = value
            instance = self.model.from_db(using, attnames, values)
            for name, value in zip(self.annotations, row[count:], strict=True):
                setattr(instance, name, value)
            instances.append(instance)
        return instances


def _fast_json(function, field: models.Field):
    """Return ``function``, or for a ``JSONField``'s own converter, a faster equivalent.

    ``JSONField.from_db_value`` decodes the column's text with ``json.loads``;
    ``cardserver.fastjson`` decodes the same JSON to the same values in less than half the
    time (a match's snapshot is read on every request of play), and leaves what it is
    unsure of to the field's own converter, which answers as it always did.
    """
    if not (
        isinstance(field, models.JSONField)
        and field.decoder is None
        and getattr(function, "__func__", None) is models.JSONField.from_db_value
    ):
        return function

    def from_db_value(value, expression, connection):
        if isinstance(value, str):
            try:
                return fastjson.loads(value)
            except fastjson.Unsure:
                pass
        return function(value, expression, connection)

    return from_db_value
