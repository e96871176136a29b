"""The caps on open streams hold across web processes sharing Redis.

Two uvicorn processes on ``cardserver.asgi`` (started by the test, on the test database
and the broker's Redis) count one account's and one IP address's streams together; the
streams of a process that is killed stop counting within ``LIVE_CAPS_TTL``.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from accounts.tokens import token_create
from benchmarks.harness import wait_until
from tests import processes
from tests.live.server import headers_for, open_stream
from tests.matches import start_match

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


@contextlib.contextmanager
def web_process(tmp_path, name: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """A uvicorn process serving the arena with small caps; yield its URL."""
    with processes.web_process(
        tmp_path / name,
        LIVE_MAX_STREAMS_PER_ACCOUNT="2",
        LIVE_MAX_STREAMS_PER_IP="3",
        LIVE_CAPS_TTL="3",
    ) as served:
        yield served


def assert_refused(client: httpx.Client, path: str, token: str | None, per: str) -> None:
    """Open a stream; assert it is answered 429 (the cap ``per``) in the JSON error shape."""
    with client.stream("GET", path, headers=headers_for(token)) as answer:
        assert answer.status_code == 429, f"{answer.status_code}: admitted beyond the cap"
        assert int(answer.headers["Retry-After"]) > 0
        error = json.loads(answer.read())["error"]
    assert error["code"] == "too_many_streams"
    assert error["detail"]["per"] == per
    assert error["detail"]["retry_after"] == int(answer.headers["Retry-After"])


def test_stream_caps_hold_across_two_web_processes_and_a_killed_one_s_are_released(
    tmp_path, user_factory
):
    user = user_factory(username="capped")
    token = token_create(user=user)[1]
    match = start_match([user, user_factory(username="other")])
    path = f"/api/v1/matches/{match.pk}/stream/"
    with (
        web_process(tmp_path, "a") as (url_a, _),
        web_process(tmp_path, "b") as (url_b, process_b),
        httpx.Client(base_url=url_a, timeout=10) as a,
        httpx.Client(base_url=url_b, timeout=10) as b,
    ):
        # The account's cap (2): one stream on each process, and a third on either is refused.
        with open_stream(a, path, token=token), open_stream(b, path, token=token):
            assert_refused(a, path, token, "account")
            assert_refused(b, path, token, "account")
            # The IP address's cap (3): the anonymous stream on a is the third.
            with open_stream(a, path):
                assert_refused(b, path, None, "IP address")
        # Closed, they give their places back (both processes live on: only the release
        # can), whichever process held them.
        wait_until(
            lambda: admitted(a, path, token, 2), timeout=30, what="the closed streams' places"
        )

        # Two streams on b, then b is killed without closing them.
        held = [b.stream("GET", path, headers=headers_for(token)) for _ in range(2)]
        for response in held:
            assert response.__enter__().status_code == 200
        assert_refused(a, path, token, "account")
        process_b.kill()
        process_b.wait(10)
        for response in held:
            with contextlib.suppress(httpx.HTTPError):
                response.__exit__(None, None, None)

        # Its places come back once its heartbeat has lapsed (LIVE_CAPS_TTL, 3 s).
        wait_until(
            lambda: admitted(a, path, token, 2), timeout=30,
            what="the killed process's streams to stop counting",
        )  # fmt: skip


def admitted(client: httpx.Client, path: str, token: str, count: int) -> bool:
    """Return whether ``count`` streams of ``token`` open at once on ``client``'s server."""
    with contextlib.ExitStack() as streams:
        answers = [
            streams.enter_context(client.stream("GET", path, headers=headers_for(token)))
            for _ in range(count)
        ]
        return all(answer.status_code == 200 for answer in answers)


def test_streams_no_cap_applies_to_are_not_counted_in_redis(tmp_path, user_factory):
    import redis
    from django.conf import settings

    from games.live import channel_prefix

    user = user_factory(username="uncapped")
    token = token_create(user=user)[1]
    match = start_match([user, user_factory(username="other")])
    path = f"/api/v1/matches/{match.pk}/stream/"
    counts = redis.Redis.from_url(settings.LIVE_PUBSUB_URL)
    account_hash = f"{channel_prefix()}caps:account:{user.pk}"
    with (
        processes.web_process(
            tmp_path / "uncapped", LIVE_MAX_STREAMS_PER_ACCOUNT="0", LIVE_MAX_STREAMS_PER_IP="0"
        ) as (url, _),
        httpx.Client(base_url=url, timeout=10) as client,
        open_stream(client, path, token=token) as reader,
    ):
        assert reader.next()["event"] == "state"
        # Counted, the stream would be a field of this hash (the caps' script, one round
        # trip per opening, counts where the cap is 0 too).
        assert not counts.exists(account_hash)
    counts.close()
