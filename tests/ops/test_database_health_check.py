"""The PostgreSQL backend's health check: no round trip while the connection is idle and
quiet, and still a connection that the server ended is found and replaced."""

from __future__ import annotations

import os
import resource
import time

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql.base import DatabaseWrapper as DjangoWrapper

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def round_trips(monkeypatch):
    """Count Django's own check (``SELECT 1``), which ours falls back to."""
    calls = []
    is_usable = DjangoWrapper.is_usable

    def spy(self):
        calls.append(self.alias)
        return is_usable(self)

    monkeypatch.setattr(DjangoWrapper, "is_usable", spy)
    return calls


def _terminate(backend_pid: int) -> None:
    settings = connection.settings_dict
    with psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        autocommit=True,
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [backend_pid])


def test_an_idle_healthy_connection_is_usable_without_a_query(round_trips):
    connection.ensure_connection()

    assert connection.is_usable()
    assert round_trips == []


def test_a_connection_the_server_ended_is_unusable_and_replaced(round_trips):
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    _terminate(pid)

    deadline = time.monotonic() + 10
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)

    assert not connection.is_usable()
    # As at the start of a request: the check fails, the connection is closed, and the
    # next query opens a new one instead of failing.
    connection.health_check_done = False
    connection.close_if_health_check_failed()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


def test_in_a_transaction_the_check_asks_the_server(round_trips):
    connection.ensure_connection()
    connection.set_autocommit(False)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        assert connection.is_usable()
        assert round_trips == ["default"]
    finally:
        connection.rollback()
        connection.set_autocommit(True)


@pytest.fixture
def high_descriptors():
    """Take the descriptors below 1,100, as a web process holding 1,000 streams has."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2048 if hard == resource.RLIM_INFINITY else min(2048, hard)
    # Every server this project runs on allows this (a stream holder needs far more).
    assert wanted >= 1200, f"the open-file limit ({hard}) allows no descriptor over 1,024"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_connection_on_a_descriptor_over_1024_is_usable_without_a_query(
    round_trips, high_descriptors
):
    # select() cannot watch a descriptor over FD_SETSIZE (1,024): the check raised, so a
    # request of a process holding many streams judged its connection dead and opened a
    # new one, most often on a descriptor as high (a PostgreSQL backend per request).
    connection.close()
    connection.ensure_connection()
    assert connection.connection.pgconn.socket > 1024

    assert connection.is_usable()
    assert round_trips == []
