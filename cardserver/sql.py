"""Precompiled single-row SELECTs, for the few queries that every API request makes.

Building the SQL of a query through the ORM costs about 0.3-0.5 ms of CPU, several times
what PostgreSQL spends answering a primary-key lookup. A ``RowQuery`` writes its SQL once
per database connection and then only executes it. Values pass through the same
conversions the ORM applies (``get_db_converters`` of the backend and of each field), and
rows become model instances through ``Model.from_db``, so the result is what
``Model.objects.get`` would give, on SQLite and PostgreSQL alike.

    TOKEN_USER = RowQuery(User, "JOIN authtoken_token t ON t.user_id = {table}.id "
                                "WHERE t.key = %s")
    user = TOKEN_USER.one([key])
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence

from django.db import DEFAULT_DB_ALIAS, connections, models

from cardserver import fastjson


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
