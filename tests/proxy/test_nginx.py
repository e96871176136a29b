"""nginx in front (scripts/proxy: Debian's nginx with docker/nginx/'s configuration), as
clients that misbehave, streams and rate limits meet it. Skipped without nginx, except
where these tests must run (``.ci/run`` installs nginx and sets CARDSERVER_REQUIRE_NGINX)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import httpx
import pytest

from accounts.tokens import token_create
from benchmarks.edge import HOST, POST, PROXY_SCRIPT, ImageServer, Proxy, misbehave
from benchmarks.harness import free_port, wait_until
from tests.live.server import LiveServer, open_stream
from tests.live.test_streams import play_over_http
from tests.matches import start_match
from tests.processes import clean_environment
from tests.proxy.conftest import require_nginx

pytestmark = pytest.mark.nginx

# docker/nginx/nginx.conf's client_header_timeout and client_body_timeout.
NGINX_TIMEOUT = 10.0


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    require_nginx()
    folder = tmp_path_factory.mktemp("web")
    with ImageServer(folder, clean_environment(folder)) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(app, tmp_path_factory):
    log = tmp_path_factory.mktemp("proxy") / "access.log"
    with Proxy(f"127.0.0.1:{app.port}", log) as running:
        yield running


def _posts_reaching(app: ImageServer) -> list[dict]:
    return [line for line in app.requests_logged() if line.get("method") == "POST"]


def test_the_configuration_passes_nginx_s_own_check():
    require_nginx()
    check = subprocess.run(
        [sys.executable, str(PROXY_SCRIPT), "--test", "--listen", "127.0.0.1:1",
         "--upstream", "127.0.0.1:2"], capture_output=True, text=True, timeout=30,
    )  # fmt: skip

    assert check.returncode == 0, check.stderr
    assert "[warn]" not in check.stderr and "[emerg]" not in check.stderr


def test_headers_sent_a_byte_at_a_time_through_the_proxy_are_cut_off_within_10_s(proxy):
    seen = misbehave(proxy.port, b"GET /api/v1/games/ HTTP/1.1\r\n" + HOST,
                     trickle=b"X-Slow: " + b"a" * 40, every=0.5)  # fmt: skip

    assert seen.answer == b""
    assert seen.closed_after is not None
    assert NGINX_TIMEOUT - 0.5 < seen.closed_after < NGINX_TIMEOUT + 3


def test_a_body_shorter_than_its_length_is_cut_off_by_the_proxy_and_never_reaches_the_app(
    app, proxy
):
    seen = misbehave(proxy.port, POST + b'Content-Length: 100\r\n\r\n{"username":')

    assert seen.closed_after is not None
    assert NGINX_TIMEOUT - 0.5 < seen.closed_after < NGINX_TIMEOUT + 3
    assert _posts_reaching(app) == []


def test_a_declared_50_mb_body_is_answered_413_at_once_by_the_proxy(app, proxy):
    seen = misbehave(proxy.port, POST + b"Content-Length: 52428800\r\n\r\n", limit=8)

    assert seen.status == 413
    assert seen.answered_after < 1
    assert seen.json()["error"] == {
        "code": "request_too_large",
        "message": "The request body is larger than 65536 bytes.",
        "detail": {"max_bytes": 65536},
    }
    assert _posts_reaching(app) == []


def test_a_client_gone_mid_body_never_reaches_the_app(app, proxy):
    for _ in range(10):
        misbehave(proxy.port, POST + b"Content-Length: 1000\r\n\r\n" + b"x" * 500, leave_after=0.1)

    time.sleep(0.5)
    assert _posts_reaching(app) == []


# In front of the in-process server (tests/live/server.py), which reads the test database.


@pytest.fixture
def live_proxy(transactional_db, tmp_path):
    require_nginx()
    with LiveServer() as server, Proxy(f"127.0.0.1:{server.port}", tmp_path / "a.log") as proxy:
        yield proxy


def test_a_stream_through_the_proxy_sees_a_move_within_a_second(live_proxy, user_factory):
    seen, answered_at = _follow_a_move(live_proxy.url, user_factory)

    assert 1 in seen, "the move never reached the stream"
    assert seen[1] - answered_at < 1.0


def _follow_a_move(url: str, user_factory) -> tuple[dict[int, float], float]:
    """Hold a match's stream through ``url``, make a move through ``url``; return when
    each event came (by ply) and when the move's answer did."""
    users = [user_factory(username=f"p{i}") for i in range(2)]
    tokens = [token_create(user=u)[1] for u in users]
    match = start_match(users)
    seen: dict[int, float] = {}
    ready = threading.Event()

    def follow() -> None:
        with (
            httpx.Client(base_url=url, timeout=20) as client,
            open_stream(client, f"/api/v1/matches/{match.pk}/stream/", token=tokens[0]) as events,
        ):
            while 1 not in seen:
                event = events.next()
                ready.set()
                if event["event"] in ("state", "move"):
                    seen[event["id"]] = time.monotonic()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    assert ready.wait(10)
    time.sleep(0.2)
    play_over_http(SimpleNamespace(url=url), match, tokens, moves=1)
    # The move's answer is in: the event comes within a second of it (or before it: the
    # server publishes at commit, before it answers).
    answered_at = time.monotonic()
    follower.join(5)
    return seen, answered_at


# The split shape (docs/edge.md): nginx sends streams and wait/ to the live server and the
# rest to a stock WSGI server (Django's own here, in this process, to read the test
# database; gunicorn's gthread workers in production and in benchmarks.live).


class WSGIServer:
    """Django's threaded WSGI server on ``cardserver.wsgi``'s handler, in a thread of this
    process; ``paths`` lists what it was asked."""

    def __init__(self) -> None:
        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
        from django.core.wsgi import get_wsgi_application

        handler, self.paths = get_wsgi_application(), []

        def application(environ, start_response):
            self.paths.append(environ["PATH_INFO"])
            return handler(environ, start_response)

        self.port = free_port()
        self.server = ThreadedWSGIServer(("127.0.0.1", self.port), WSGIRequestHandler)
        self.server.set_app(application)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WSGIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def split_proxy(transactional_db, tmp_path):
    require_nginx()
    with LiveServer() as live, WSGIServer() as api:
        proxy = Proxy(f"127.0.0.1:{api.port}", tmp_path / "a.log")
        proxy.command += ["--live-upstream", f"127.0.0.1:{live.port}"]
        with proxy:
            yield SimpleNamespace(url=proxy.url, api=api)


def test_in_the_split_shape_a_move_made_on_the_api_wakes_a_stream_held_on_the_live_server(
    split_proxy, user_factory
):
    seen, answered_at = _follow_a_move(split_proxy.url, user_factory)
    asked = set(split_proxy.api.paths)

    assert 1 in seen, "the move never reached the stream"
    assert seen[1] - answered_at < 1.0
    assert any(path.endswith("/moves/") for path in asked)
    assert not any(path.endswith("/stream/") for path in asked)


def test_json_is_gzipped_and_every_request_logged_as_a_json_line(live_proxy):
    answer = httpx.get(f"{live_proxy.url}/api/v1/games/", headers={"Accept-Encoding": "gzip"})

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.json()  # decompressed by httpx
    # nginx writes the line once the answer is sent: a moment after the client has it.
    wait_until(lambda: live_proxy.lines_logged(), timeout=5, what="nginx's access-log line")
    logged = live_proxy.lines_logged()[-1]
    assert logged["logger"] == "nginx.access"
    assert (logged["method"], logged["path"], logged["status"]) == ("GET", "/api/v1/games/", 200)


@pytest.fixture
def one_window(monkeypatch):
    """Count every request of the test in one rate-limit window, whatever the clock says."""
    from cardserver import throttling

    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: 86400.0 * 20000 + 1))


def test_rate_limits_through_the_proxy_key_on_the_client_whatever_its_header_says(
    live_proxy, settings, one_window
):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "anon": "3/minute"}
    other_client = httpx.HTTPTransport(local_address="127.0.0.2")

    with httpx.Client(base_url=live_proxy.url) as client:
        answers = [
            client.get("/api/v1/games/", headers={"X-Forwarded-For": f"10.8.{n}.1"}).status_code
            for n in range(8)
        ]
    with httpx.Client(base_url=live_proxy.url, transport=other_client) as client:
        # Another address, claiming to be the first one: counted as itself.
        other = client.get("/api/v1/games/", headers={"X-Forwarded-For": "127.0.0.1"})

    assert answers == [200] * 3 + [429] * 5
    assert other.status_code == 200
