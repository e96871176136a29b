"""Django's PostgreSQL backend, with a health check that costs no round trip to the server.

With ``CONN_HEALTH_CHECKS`` on, Django checks a connection it reuses before the first
query of every request, by sending ``SELECT 1`` and waiting for the answer: a round trip
per request, which a playing client's short requests feel (a tenth of the web server's
CPU at saturation, with a thread switch per round trip). This backend asks the socket
instead: an idle connection on which the server has sent nothing is as usable as the
server left it, and a server that restarts, shuts down or ends the connection (an admin,
``idle_session_timeout``) says so by sending on it (an error, then the close), which
makes the socket readable. Only then, or when the connection is not idle, is Django's
own check (``SELECT 1``) made. A server that vanished without a word (a host that died,
a cut network) is found out by the request's first query either way: ``SELECT 1`` would
have waited on it just the same.

The socket is asked with ``poll``, not ``select``: a web process holding thousands of
streams gives the connections it opens descriptors over 1,024, which ``select`` cannot
watch. It raised, the check said "unusable", and the request closed its connection and
opened another, which took a descriptor as high: 15-23 PostgreSQL backends started and
ended each second of play in a server whose two processes held 2,000 streams
(``benchmarks.live``).

Its operations write JSON columns with ``cardserver.fastjson.dumps`` (orjson where it
writes what ``json.dumps`` would), and ``numbered_cursor`` runs statements written with
PostgreSQL's own placeholders. Everything else is Django's ``django.db.backends.postgresql``.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from django.db.backends.postgresql.psycopg_any import Jsonb, register_tzloader
from django.utils.asyncio import async_unsafe
from psycopg import RawCursor, adapters, pq

from cardserver import fastjson

_IDLE = pq.TransactionStatus.IDLE
_OK = pq.ConnStatus.OK
_TIMESTAMPTZ = adapters.types["timestamptz"].oid


class DatabaseOperations(base.DatabaseWrapper.ops_class):
    def adapt_json_value(self, value, encoder):
        # Every JSONField written (a move, the match's snapshot at each turn) comes here:
        # orjson writes the same JSON as json.dumps in a fraction of its time.
        if encoder is None:
            return Jsonb(value, dumps=fastjson.dumps)
        return super().adapt_json_value(value, encoder)

    def last_executed_query(self, cursor, sql, params):
        # A ``numbered_cursor``'s statement: Django would fill its %s placeholders on the
        # client to log it (DEBUG, a test's captured queries), and it has none. Logged as
        # written, the parameters apart.
        if isinstance(cursor, RawCursor):
            return sql
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    @async_unsafe
    def numbered_cursor(self):
        """Return a cursor (Django's wrapper, as ``cursor()``: its errors, execute wrappers
        and query log) for statements written with PostgreSQL's placeholders, ``$1``,
        ``$2``... (``cardserver.sql.numbered``), which psycopg sends as they are, the
        parameters apart.

        psycopg rewrites a statement's ``%s`` into those at every execution, and keeps the
        rewriting only for statements of at most 50 parameters: the I/O pool's write of
        the moves and matches of a commit (up to 136) was parsed again each time, 0.4 ms
        of CPU a commit (docs/turn-cost.md).
        """
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = RawCursor(self.connection)
            # As Django's cursors: the connection's time zone unless it has changed since.
            loader = self.connection.adapters.get_loader(_TIMESTAMPTZ, pq.Format.TEXT)
            if self.timezone != loader.timezone:
                register_tzloader(self.timezone, cursor)
            return self._prepare_cursor(cursor)

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None:
            return False
        pgconn = connection.pgconn
        if pgconn.status != _OK:
            return False
        if pgconn.transaction_status != _IDLE:
            return super().is_usable()
        try:
            poller = select.poll()
            poller.register(pgconn.socket, select.POLLIN)
            readable = poller.poll(0)
        except (OSError, ValueError, base.Database.Error):
            return False
        if readable:  # data, or the server's hang-up (POLLHUP, POLLERR come unasked)
            # Something came that no query asked for: usually the server's farewell.
            return super().is_usable()
        return True

