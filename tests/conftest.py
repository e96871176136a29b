"""Fixtures and markers shared by every test.

Markers (declared in pyproject.toml):

``@pytest.mark.postgres``
    The test needs PostgreSQL as the default database. It is skipped on SQLite, and runs
    in the PostgreSQL pass of ``.ci/run``.
``@pytest.mark.real_services``
    The test starts or talks to real services (a Celery worker, the broker). It runs only
    when ``CARDSERVER_REAL_SERVICES=1``, which ``.ci/run`` sets in its PostgreSQL + Redis
    pass.

Django and DRF are imported inside the fixtures, so that the engine tests, which use
none of them, import nothing of Django through this file.
"""

import itertools
import os
import sys

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from django.db import connection

    on_postgres = connection.vendor == "postgresql"
    real_services = os.environ.get("CARDSERVER_REAL_SERVICES") == "1"
    for item in items:
        if not on_postgres and item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL (DATABASE_URL)"))
        if not real_services and item.get_closest_marker("real_services"):
            item.add_marker(pytest.mark.skip(reason="needs CARDSERVER_REAL_SERVICES=1"))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite, a test database in a file, as ``make run``'s is, not Django's shared
    in-memory one: there a read or write that meets another thread's write fails at once
    ("database table is locked") instead of waiting its turn, so a test that writes while
    the live server's threads read and count its requests failed now and then under load.
    In a file, WAL and the busy timeout (``cardserver.settings``) queue them as in
    production."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        name = tmp_path_factory.mktemp("database") / "test.sqlite3"
        database.setdefault("TEST", {})["NAME"] = str(name)


@pytest.fixture(scope="session")
def live_server(django_db_setup):
    """The production server shape (uvicorn on ``cardserver.asgi``, tests/live/server.py)
    in place of pytest-django's WSGI server: pages and client bots follow matches through
    streams, which need it. pytest-django still gives its tests ``transactional_db``."""
    from tests.live.server import LiveServer

    with LiveServer(static_files=True) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_rate_limits(request):
    """Start every test with no API request counted against the rate limits.

    The counters (cardserver/throttling.py) would otherwise add up over the whole run, all
    from 127.0.0.1 and from user ids that rolled-back tests reuse.
    """
    import sys

    if "rest_framework" not in sys.modules:
        return
    from django.conf import settings
    from django.core.cache import caches

    from tests.limits import rate_limits_reset

    if type(caches[settings.API_THROTTLE_CACHE]).__name__ != "DatabaseCache":
        rate_limits_reset()
    elif DATABASE_FIXTURES & set(request.fixturenames) or request.node.get_closest_marker(
        "django_db"
    ):
        # The database cache: its table in the test database, which transactional tests'
        # flush leaves as it is.
        request.getfixturevalue("django_db_setup")
        with request.getfixturevalue("django_db_blocker").unblock():
            rate_limits_reset()


DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_reset_sequences"}


@pytest.fixture(autouse=True)
def _forget_seat_holders():
    """Forget the seat holders ``games.seats_held`` remembers, and the states
    ``games.selectors`` keeps: match ids repeat across tests."""
    yield
    seats_held = sys.modules.get("games.seats_held")
    if seats_held is not None:
        seats_held.seats_forget_all()
    selectors = sys.modules.get("games.selectors")
    if selectors is not None:
        selectors.states_forget()
    live = sys.modules.get("games.live")
    if live is not None:
        live.forget_holders()
    streams = sys.modules.get("games.streams")
    if streams is not None:
        streams.forget_public_batches()


@pytest.fixture
def celery_eager():
    """Run the Celery tasks the code sends in this process, as they are sent (the SQLite
    pass has no worker: a bot moves as soon as its turn starts)."""
    from cardserver.celery import eager_tasks

    with eager_tasks():
        yield


@pytest.fixture
def api_client():
    """Return an unauthenticated DRF test client."""
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def user_factory(db):
    """Return a function that creates users: ``user_factory(username=..., password=...)``.

    Usernames default to ``user1``, ``user2``, ... Without a password the user gets an
    unusable one, which skips the deliberately slow password hashing.
    """
    from django.contrib.auth import get_user_model

    numbers = itertools.count(1)

    def create_user(*, username: str | None = None, password: str | None = None, **fields):
        return get_user_model().objects.create_user(
            username=username or f"user{next(numbers)}", password=password, **fields
        )

    return create_user


@pytest.fixture
def user(user_factory):
    """Return a freshly created user."""
    return user_factory()


@pytest.fixture
def user_api_client(user):
    """Return a DRF test client authenticated as ``user`` with an API token."""
    from rest_framework.test import APIClient

    from accounts.tokens import token_create

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client
