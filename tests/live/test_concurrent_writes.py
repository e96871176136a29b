"""Writers of the embedded default queue up: a request that meets another connection's
write in progress waits for it, as the web server's requests do behind the worker's moves
in ``make run`` (SQLite in WAL, writes begun IMMEDIATE, a busy timeout), instead of
failing with "database table is locked" (503). The live server is the production shape,
in the test's process; the write is held open by a thread of the test."""

from __future__ import annotations

import threading

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from tests.live.server import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_request_meeting_a_write_in_progress_waits_for_it(user_factory):
    user = user_factory(username="writer")
    holding, release = threading.Event(), threading.Event()

    def write_and_hold() -> None:
        try:
            with transaction.atomic():
                get_user_model().objects.filter(pk=user.pk).update(first_name="busy")
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    with LiveServer() as server:
        writer = threading.Thread(target=write_and_hold)
        writer.start()
        assert holding.wait(10)
        threading.Timer(0.5, release.set).start()
        # Counting the request against the rate limits is a write (on SQLite, to the
        # database cache); listing games reads the database too.
        answer = httpx.get(f"{server.url}/api/v1/games/", timeout=15)
        writer.join(10)
    assert answer.status_code == 200, answer.text
