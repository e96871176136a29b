"""The live tests' server reads the test database from several threads at once.

On SQLite the test database is one in-memory database shared by the connections of every
thread (shared cache), where a read that meets another connection's write fails at once
("database table is locked") instead of waiting as on a file. Reading uncommitted rows
lifts that for readers; it changes nothing on PostgreSQL or on a real SQLite file.
"""

import pytest
from django.db.backends.signals import connection_created


def _read_uncommitted(sender, connection, **kwargs) -> None:
    if connection.vendor == "sqlite" and "memory" in str(connection.settings_dict["NAME"]):
        connection.cursor().execute("PRAGMA read_uncommitted = 1")


@pytest.fixture(autouse=True)
def _shared_memory_sqlite_reads():
    connection_created.connect(_read_uncommitted)
    yield
    connection_created.disconnect(_read_uncommitted)
