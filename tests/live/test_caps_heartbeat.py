"""The heartbeat of the stream caps kept in Redis puts right what Redis missed.

On the broker's Redis (the PostgreSQL + Redis pass), in this process: a release that never
reached Redis must not hold a place under the cap for as long as the process lives, and a
caps object replaced by another (the URL changed) must stop writing its counts.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import redis
from django.contrib.auth.models import AnonymousUser
from django.test import override_settings

from benchmarks.harness import wait_until
from games import stream_caps
from tests.live.conftest import redis_url

pytestmark = [pytest.mark.real_services]

IP = "203.0.113.7"  # a documentation address: no other test's streams count there


@pytest.fixture
def url() -> str:
    # Marked real_services, so these tests run only in the PostgreSQL + Redis pass, where
    # a Redis missing is a broken run, not a reason to pass over them.
    found = redis_url()
    assert found, "needs Redis: set CELERY_BROKER_URL or LIVE_PUBSUB_URL to a redis:// URL"
    return found


def _counted(shared: stream_caps.SharedCaps, owner: str) -> int:
    return int(shared.redis.hget(f"{shared.prefix}ip:{IP}", owner) or 0)


def test_a_release_redis_missed_is_deleted_at_the_next_beat(url, monkeypatch):
    plan = SimpleNamespace(user=AnonymousUser(), ip=IP)
    with override_settings(LIVE_PUBSUB_URL=url, LIVE_MAX_STREAMS_PER_IP=1):
        shared = stream_caps.shared_caps()
        lease = stream_caps.stream_lease(plan)
        assert isinstance(lease, stream_caps.Lease)
        assert _counted(shared, shared.me) == 1

        def redis_gone(**_):
            raise redis.ConnectionError("Redis went away")

        monkeypatch.setattr(shared, "_release", redis_gone)
        lease.release()
        wait_until(lambda: not stream_caps._open_by_ip[IP], timeout=5, what="the release")
        assert _counted(shared, shared.me) == 1  # Redis missed it: the cap is held
        shared.beat()
        assert _counted(shared, shared.me) == 0
        again = stream_caps.stream_lease(plan)
        assert isinstance(again, stream_caps.Lease), "refused a place nobody holds"
        monkeypatch.undo()
        again.release()
        wait_until(lambda: not _counted(shared, shared.me), timeout=5, what="the release")


def test_a_replaced_caps_object_stops_beating_once_its_streams_are_given_back(url):
    plan = SimpleNamespace(user=AnonymousUser(), ip=IP)
    # Another URL of the same Redis: were the replaced object to beat on, this process's
    # streams would count twice there.
    other = url + ("&" if "?" in url else "?") + "socket_timeout=3"
    with override_settings(LIVE_PUBSUB_URL=url, LIVE_MAX_STREAMS_PER_IP=5, LIVE_CAPS_TTL=0.3):
        first = stream_caps.shared_caps()
        lease = stream_caps.stream_lease(plan)
        with override_settings(LIVE_PUBSUB_URL=other):
            second = stream_caps.shared_caps()
            assert second is not first
            second.beat()
            assert first._thread.is_alive(), "stopped before its stream was given back"
            lease.release()
            first._thread.join(timeout=5)
            assert not first._thread.is_alive(), "the replaced object beats on"
            assert _counted(second, first.me) == 0
            # The beat after the release writes this process's count as 0 (deleted).
            wait_until(lambda: not _counted(second, second.me), timeout=5, what="the beat")
