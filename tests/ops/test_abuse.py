"""Abuse limits: API rate limits, request body size, open matches per user and per bot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest

from bots.models import Bot
from cardserver.throttling import parse_rate
from games.models import Match
from tests.limits import rate_limits_reset
from tests.matches import token_client


@pytest.fixture
def rates(settings):
    """Set the rate of some scopes: ``rates(anon="3/minute")``."""

    def set_rates(**scopes: str | None) -> None:
        settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, **scopes}

    return set_rates


def assert_throttled(response, period: int = 60) -> None:
    assert response.status_code == 429
    body = response.json()
    assert body["error"]["code"] == "throttled"
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= period
    assert body["error"]["detail"] == {"retry_after": retry_after}


# --- Rate limits ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "expected"),
    [("60/minute", (60, 60)), ("5/s", (5, 1)), ("20/hour", (20, 3600)), ("9/day", (9, 86400))],
)
def test_rates_read_as_requests_per_period(rate, expected):
    assert parse_rate(rate) == expected


@pytest.mark.django_db
def test_anonymous_requests_are_limited_per_ip_with_retry_after(api_client, rates):
    rates(anon="3/minute")

    answers = [api_client.get("/api/v1/games/").status_code for _ in range(3)]
    throttled = api_client.get("/api/v1/games/")
    other_ip = api_client.get("/api/v1/games/", REMOTE_ADDR="10.1.2.3")

    assert answers == [200, 200, 200]
    assert_throttled(throttled)
    assert other_ip.status_code == 200


@pytest.mark.django_db
def test_signed_in_requests_are_limited_per_user_not_per_ip(user_factory, rates):
    rates(user="2/minute")
    alice, bob = token_client(user_factory()), token_client(user_factory())

    answers = [alice.get("/api/v1/games/").status_code for _ in range(2)]

    assert answers == [200, 200]
    assert_throttled(alice.get("/api/v1/games/"))
    assert bob.get("/api/v1/games/").status_code == 200


@pytest.mark.django_db
def test_playing_counts_in_its_own_higher_scope(user, rates):
    rates(user="2/minute", play="100/minute")
    client = token_client(user)
    match = client.post("/api/v1/matches/", {"game": "durak", "players": 2,
                                             "seats": [{"user": user.username}] * 2})
    assert match.status_code == 201
    match_id = match.json()["id"]

    played = 0
    for _ in range(20):
        view = client.get(f"/api/v1/matches/{match_id}/me/").json()
        if view["status"] != "active":
            break
        answer = client.post(
            f"/api/v1/matches/{match_id}/moves/",
            {"ply": view["ply"], "seat": view["seat"], "move": view["legal_moves"][0]},
        )
        assert answer.status_code == 200, answer.json()
        played += 1

    assert played >= 10
    # The general scope still had room for one request (the create used the other).
    assert client.get("/api/v1/games/").status_code == 200
    assert_throttled(client.get("/api/v1/games/"))


@pytest.mark.django_db
def test_match_creation_has_a_stricter_scope(user, rates):
    rates(create="2/minute")
    client = token_client(user)
    body = {"game": "durak", "players": 2}

    created = [client.post("/api/v1/matches/", body).status_code for _ in range(2)]

    assert created == [201, 201]
    assert_throttled(client.post("/api/v1/matches/", body))
    # Reading is not creating.
    assert client.get("/api/v1/matches/").status_code == 200


@pytest.mark.django_db
def test_bot_registration_has_a_stricter_scope(user, rates):
    rates(register="1/hour")
    client = token_client(user)

    first = client.post("/api/v1/bots/", {"name": "c1", "kind": "client", "games": ["durak"]})
    second = client.post("/api/v1/bots/", {"name": "c2", "kind": "client", "games": ["durak"]})

    assert first.status_code == 201
    assert_throttled(second, period=3600)
    assert not Bot.objects.filter(name="c2").exists()


@pytest.mark.django_db
def test_password_guessing_is_limited_per_ip(api_client, rates):
    rates(login="2/minute")
    credentials = {"username": "nobody", "password": "guess"}

    answers = [api_client.post("/api/v1/accounts/token/", credentials) for _ in range(2)]

    assert [a.status_code for a in answers] == [400, 400]
    assert_throttled(api_client.post("/api/v1/accounts/token/", credentials))


@pytest.fixture
def one_window(monkeypatch):
    """Count every request of the test in one rate-limit window, whatever the clock says."""
    from types import SimpleNamespace

    from cardserver import throttling

    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: 86400.0 * 20000 + 1))


@pytest.mark.django_db
def test_password_guesses_with_a_new_x_forwarded_for_each_are_still_limited(
    api_client, rates, one_window
):
    # No API_NUM_PROXIES: the client is REMOTE_ADDR, whatever X-Forwarded-For says.
    rates(login="5/minute")
    credentials = {"username": "nobody", "password": "guess"}
    for _ in range(5):
        api_client.post("/api/v1/accounts/token/", credentials)

    answers = [
        api_client.post(
            "/api/v1/accounts/token/", credentials, HTTP_X_FORWARDED_FOR=f"10.9.{n}.{n}"
        ).status_code
        for n in range(60)
    ]

    assert answers == [429] * 60


@pytest.mark.django_db
def test_anonymous_reads_with_a_new_x_forwarded_for_each_are_still_limited(
    api_client, rates, one_window
):
    rates(anon="3/minute")
    for _ in range(3):
        api_client.get("/api/v1/games/")

    answers = [
        api_client.get("/api/v1/games/", HTTP_X_FORWARDED_FOR=f"10.8.{n}.1").status_code
        for n in range(10)
    ]

    assert answers == [429] * 10


@pytest.mark.django_db
def test_behind_proxies_the_client_is_the_address_they_forwarded(
    api_client, rates, settings, one_window
):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    rates(anon="1/minute")

    first = api_client.get("/api/v1/games/", HTTP_X_FORWARDED_FOR="spoofed, 10.7.0.1")
    again = api_client.get("/api/v1/games/", HTTP_X_FORWARDED_FOR="other, 10.7.0.1")
    another = api_client.get("/api/v1/games/", HTTP_X_FORWARDED_FOR="10.7.0.2")

    assert first.status_code == 200
    assert_throttled(again)
    assert another.status_code == 200


@pytest.mark.django_db
def test_a_scope_set_off_is_not_limited(api_client, rates):
    rates(anon=None)

    assert all(api_client.get("/api/v1/games/").status_code == 200 for _ in range(30))


@pytest.mark.django_db
def test_health_is_never_throttled(api_client, rates, monkeypatch):
    monkeypatch.setattr("cardserver.health.worker_queues", lambda timeout: {})
    rates(anon="1/minute")

    assert [api_client.get("/api/v1/health/").status_code for _ in range(3)] == [200] * 3


@pytest.mark.django_db
def test_counters_expire_with_their_window(api_client, rates):
    rates(anon="1/minute")
    api_client.get("/api/v1/games/")
    assert api_client.get("/api/v1/games/").status_code == 429

    rate_limits_reset()  # as when the minute is over

    assert api_client.get("/api/v1/games/").status_code == 200


@pytest.mark.real_services
@pytest.mark.parametrize("cache", ["database", "broker-redis"])
def test_two_web_processes_count_against_one_limit(tmp_path, cache):
    from benchmarks.harness import accepts, free_port, stop_process_group, wait_until
    from tests.processes import BASE_DIR, clean_environment

    variables = {"THROTTLE_LOGIN": "15/hour"}
    if cache == "broker-redis":
        broker = os.environ.get("CELERY_BROKER_URL", "")
        # Real-service tests run with the broker on Redis (.ci/run's second pass).
        assert broker.startswith("redis://"), "real-service tests need CELERY_BROKER_URL on Redis"
        variables["CELERY_BROKER_URL"] = broker
    environment = clean_environment(tmp_path / "var", **variables)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=BASE_DIR, env=environment, check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    if cache == "broker-redis":
        # This test's own counters only: another test's would change the count.
        subprocess.run(
            [sys.executable, "-c", "import django; django.setup(); "
             "from tests.limits import rate_limits_reset; rate_limits_reset()"],
            cwd=BASE_DIR, env={**environment, "DJANGO_SETTINGS_MODULE": "cardserver.settings"},
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    ports = [free_port(), free_port()]
    servers = [
        subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=BASE_DIR, env=environment, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        for port in ports
    ]
    try:
        for port in ports:
            wait_until(lambda port=port: accepts(port), timeout=60, what="a web process")
        credentials = {"username": "nobody", "password": "guess"}
        answers = [
            httpx.post(
                f"http://127.0.0.1:{port}/api/v1/accounts/token/", json=credentials, timeout=30
            ).status_code
            for port in ports * 10
        ]
    finally:
        for server in servers:
            stop_process_group(server)

    assert answers.count(400) == 15
    assert answers.count(429) == 5


# --- Request body -----------------------------------------------------------------------


@pytest.mark.django_db
def test_an_oversized_api_body_is_refused_with_413_before_it_is_read(user, settings):
    settings.API_MAX_BODY_SIZE = 1000
    client = token_client(user)
    padding = "x" * 2000

    response = client.post(
        "/api/v1/matches/",
        json.dumps({"game": "durak", "players": 2, "padding": padding}),
        content_type="application/json",
    )

    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "code": "request_too_large",
            "message": "The request body is larger than 1000 bytes.",
            "detail": {"max_bytes": 1000},
        }
    }
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_a_body_within_the_limit_is_served(user, settings):
    settings.API_MAX_BODY_SIZE = 1000
    client = token_client(user)

    response = client.post("/api/v1/matches/", {"game": "durak", "players": 2})

    assert response.status_code == 201


def test_default_body_limits_are_set(settings):
    assert settings.API_MAX_BODY_SIZE == 64 * 1024
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 1024 * 1024


# --- Open matches -----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_user_cannot_open_more_matches_than_the_cap(user, settings):
    settings.MAX_OPEN_MATCHES_PER_USER = 3
    client = token_client(user)
    body = {"game": "durak", "players": 2}
    created = [client.post("/api/v1/matches/", body) for _ in range(3)]

    refused = client.post("/api/v1/matches/", body)

    assert [c.status_code for c in created] == [201] * 3
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "too_many_open_matches"
    assert refused.json()["error"]["detail"] == {"open_matches": 3, "limit": 3}
    assert Match.objects.count() == 3

    # Cancelling one makes room for another.
    assert client.post(f"/api/v1/matches/{created[0].json()['id']}/cancel/").status_code == 200
    assert client.post("/api/v1/matches/", body).status_code == 201


@pytest.mark.django_db
def test_a_bot_cannot_sit_in_more_open_matches_than_the_cap(user_factory, settings):
    settings.MAX_OPEN_MATCHES_PER_BOT = 2
    owner, other = user_factory(), user_factory()
    account = user_factory(username="capped-account")
    bot = Bot.objects.create(
        name="capped", owner=owner, kind=Bot.Kind.CLIENT, account=account, games=["durak"]
    )
    client = token_client(owner)
    seats = {"game": "durak", "players": 2, "seats": [{"bot": "capped"}, None]}
    created = [client.post("/api/v1/matches/", seats).status_code for _ in range(2)]
    open_match = token_client(other).post("/api/v1/matches/", {"game": "durak", "players": 2})

    refused_create = client.post("/api/v1/matches/", seats)
    refused_join = client.post(
        f"/api/v1/matches/{open_match.json()['id']}/join/", {"bot": "capped"}
    )

    assert created == [201, 201]
    for refused in (refused_create, refused_join):
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "too_many_open_matches"
        assert "Bot capped" in refused.json()["error"]["message"]
    assert Match.objects.filter(seats__bot=bot).count() == 2


@pytest.mark.django_db
def test_built_in_bots_are_shared_and_not_capped(user_factory, settings):
    from bots.services import builtin_bots_ensure

    builtin_bots_ensure()
    settings.MAX_OPEN_MATCHES_PER_BOT = 1
    body = {"game": "durak", "players": 2, "seats": [None, {"bot": "random"}]}

    answers = [token_client(user_factory()).post("/api/v1/matches/", body) for _ in range(3)]

    assert [a.status_code for a in answers] == [201] * 3


@pytest.mark.real_services
def test_a_redis_counter_is_one_round_trip_and_keeps_its_expiry(settings):
    """Django's RedisCache.incr costs EXISTS and INCRBY; the throttle counts with one
    command that creates the window's counter with its expiry, through one client built
    once (Django's get_client() builds a new one on every call)."""
    from django.core.cache import caches

    from cardserver.throttling import _count

    broker = os.environ.get("CELERY_BROKER_URL", "")
    assert broker.startswith("redis://"), "real-service tests need CELERY_BROKER_URL on Redis"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": broker}
    }
    settings.API_THROTTLE_RATES = {"user": "3/minute"}
    cache = caches["default"]
    client = cache._cache.get_client(write=True)
    sent, built = [], []
    real, real_client = client.connection_pool.get_connection, cache._cache._client

    def counted(*args, **kwargs):
        sent.append(1)
        return real(*args, **kwargs)

    def counted_client(*args, **kwargs):
        built.append(1)
        return real_client(*args, **kwargs)

    client.connection_pool.get_connection = counted
    cache._cache._client = counted_client
    ident = f"test-{os.getpid()}-{time.time_ns()}"
    now = time.time()
    try:
        waits = [_count("user", ident, now) for _ in range(4)]
    finally:
        client.connection_pool.get_connection = real
        cache._cache._client = real_client

    assert waits[:3] == [None, None, None] and waits[3] > 0
    assert len(sent) == 4  # one connection checkout, one round trip, per request
    assert len(built) == 1
    key = cache.make_and_validate_key(f"throttle:user:{ident}:{int(now // 60)}")
    assert cache.get(f"throttle:user:{ident}:{int(now // 60)}") == 4
    assert 0 < client.ttl(key) <= 61
