"""The hub every live test names: the embedded one (a Unix socket per web process) and,
in the PostgreSQL + Redis pass, Redis pub/sub; tests taking ``live_hub`` run on each."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

HUBS = [pytest.param("embedded"), pytest.param("redis", marks=pytest.mark.real_services)]


def redis_url() -> str:
    """Return the Redis of the run's pub/sub (by default the broker's), or ""."""
    from django.conf import settings

    broker = settings.CELERY_BROKER_URL
    return settings.LIVE_PUBSUB_URL or (broker if broker.startswith("redis://") else "")


@pytest.fixture(params=HUBS)
def live_hub(request) -> Iterator[str]:
    """Run the test on the hub named by the parameter; yield ``LIVE_PUBSUB_URL`` ("" for
    the embedded hub). A server's hub starts with its first stream, on these settings."""
    from django.test import override_settings

    url = redis_url() if request.param == "redis" else ""
    if request.param == "redis" and not url:
        pytest.skip("needs Redis (CELERY_BROKER_URL or LIVE_PUBSUB_URL)")
    with override_settings(LIVE_PUBSUB_URL=url):
        yield url


@pytest.fixture
def server(live_hub):
    from tests.live.server import LiveServer

    with LiveServer() as running:
        yield running
