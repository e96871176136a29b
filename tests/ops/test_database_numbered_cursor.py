"""Statements written with PostgreSQL's own placeholders (``cardserver.sql.numbered``),
run by the backend's ``numbered_cursor``: psycopg sends them as they are, and Django
still wraps their errors and logs them."""

from __future__ import annotations

import pytest
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext

from cardserver.sql import numbered


def test_the_placeholders_are_numbered_in_order():
    assert numbered("SELECT %s, %s FROM t WHERE id = %s") == "SELECT $1, $2 FROM t WHERE id = $3"


def test_a_percent_sign_that_is_not_a_placeholder_is_refused():
    with pytest.raises(ValueError, match="not a %s placeholder"):
        numbered("SELECT 7 %% %s")


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_numbered_statement_runs_with_its_parameters_apart():
    with connection.numbered_cursor() as cursor:
        cursor.execute(numbered("SELECT %s::int + %s::int, %s::text"), [2, 3, "it's $1"])
        assert cursor.fetchone() == (5, "it's $1")


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_numbered_statement_is_logged_as_written():
    with CaptureQueriesContext(connection) as queries, connection.numbered_cursor() as cursor:
        cursor.execute("SELECT $1::int", [4])

    assert [q["sql"] for q in queries.captured_queries] == ["SELECT $1::int"]


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_numbered_statements_error_is_djangos():
    with pytest.raises(DataError), connection.numbered_cursor() as cursor:
        cursor.execute("SELECT 1 / $1::int", [0])
