"""Live play on a real ASGI server: the match stream, the account stream and ``wait/``.

Each test starts uvicorn on ``cardserver.asgi`` (tests/live/server.py) and talks to it
over sockets, once on each hub (``live_hub``, tests/live/conftest.py): the embedded one,
and in the PostgreSQL + Redis pass Redis pub/sub, with the same assertions. Moves that a
Celery worker plays are in tests/live/test_worker_moves.py.
"""

from __future__ import annotations

import random
import threading
import time

import httpx
import pytest
from django.conf import settings
from django.test import override_settings

from accounts.tokens import token_create
from benchmarks.harness import wait_until
from games import stream_caps
from games.models import Match
from games.move_services import match_move_submit
from games.selectors import match_state
from tests.live.server import EventReader, LiveServer, headers_for, open_stream
from tests.matches import start_match

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def players(user_factory):
    users = [user_factory(username=f"p{i}") for i in range(2)]
    return users, [token_create(user=u)[1] for u in users]


def call(client: httpx.Client, method: str, url: str, **kwargs) -> httpx.Response:
    """One request, tried again after a 503 as the API asks (``Retry-After``), as a client
    should."""
    for _ in range(20):
        answer = client.request(method, url, **kwargs)
        if answer.status_code != 503:
            return answer
        time.sleep(0.1)
    return answer


def play_over_http(server: LiveServer, match: Match, tokens: list[str], *, seed: int = 1,
                   moves: int | None = None) -> int:  # fmt: skip
    """Play random legal moves through the API as the seat to move; return the last ply."""
    rng = random.Random(seed)
    base = f"/api/v1/matches/{match.pk}"
    played = 0
    with httpx.Client(base_url=server.url, timeout=10) as client:
        while moves is None or played < moves:
            view = call(client, "GET", f"{base}/me/", headers=headers_for(tokens[0])).json()
            if view["status"] != "active":
                return view["ply"]
            token = tokens[view["to_move"]]
            view = call(client, "GET", f"{base}/me/", headers=headers_for(token)).json()
            answer = call(
                client, "POST", f"{base}/moves/", headers=headers_for(token),
                json={"ply": view["ply"], "move": rng.choice(view["legal_moves"])},
            )  # fmt: skip
            assert answer.status_code == 200, answer.text
            played += 1
    return match.ply + played


def collect(
    server: LiveServer, path: str, token: str | None, found: list, *, ndjson: bool = False,
    ready: threading.Event | None = None, until: str = "end",
) -> threading.Thread:  # fmt: skip
    def run() -> None:
        with httpx.Client(base_url=server.url, timeout=30) as client, open_stream(
            client, path, token=token, ndjson=ndjson
        ) as reader:
            found.append(reader.next())
            if ready is not None:
                ready.set()
            found.extend(reader.until(until))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def assert_every_ply_once(events: list[dict], last_ply: int) -> None:
    moves = [event["id"] for event in events if event["event"] == "move"]
    assert moves == list(range(moves[0], last_ply + 1)), moves
    states = [event for event in events if event["event"] == "state"]
    assert [s["data"]["ply"] for s in states] == sorted({s["data"]["ply"] for s in states})
    assert states[-1]["data"]["ply"] == last_ply
    assert events[-1]["event"] == "end"


@pytest.mark.parametrize("ndjson", [False, True], ids=["sse", "ndjson"])
def test_a_whole_match_is_streamed_to_both_seats_and_a_spectator_every_ply_once(
    server, players, ndjson
):
    users, tokens = players
    match = start_match(users)
    path = f"/api/v1/matches/{match.pk}/stream/"
    seen: dict[str, list] = {"seat0": [], "seat1": [], "spectator": []}
    threads = []
    for name, token in [("seat0", tokens[0]), ("seat1", tokens[1]), ("spectator", None)]:
        ready = threading.Event()
        threads.append(collect(server, path, token, seen[name], ndjson=ndjson, ready=ready))
        assert ready.wait(10)
    last = play_over_http(server, match, tokens)
    for thread in threads:
        thread.join(30)
    for name, events in seen.items():
        assert events[0]["event"] == "state" and events[0]["data"]["ply"] == 0, name
        assert_every_ply_once(events, last)
        assert events[-1]["data"]["status"] == "finished"
    # Each seat sees its own hand; the spectator the public view.
    assert seen["seat0"][0]["data"]["seat"] == 0
    assert seen["seat1"][0]["data"]["seat"] == 1
    assert seen["spectator"][0]["data"]["seat"] is None
    turns = [e["data"] for e in seen["seat0"] if e["event"] == "state" and e["data"]["your_turn"]]
    assert turns and all(t["legal_moves"] for t in turns)


def test_a_stream_cut_off_resumes_with_last_event_id_missing_no_move(server, players):
    users, tokens = players
    match = start_match(users)
    path = f"/api/v1/matches/{match.pk}/stream/"
    with httpx.Client(base_url=server.url, timeout=10) as client:
        with open_stream(client, path, token=tokens[0]) as reader:
            first = reader.next()
        assert first["id"] == 0
        play_over_http(server, match, tokens, moves=5)
        with open_stream(client, path, token=tokens[0], last_event_id=2) as reader:
            events = [reader.next() for _ in range(4)]
    assert [(e["event"], e["id"]) for e in events] == [
        ("move", 3), ("move", 4), ("move", 5), ("state", 5)
    ]


def test_the_account_stream_announces_the_match_every_turn_and_the_end(server, players):
    """Seat 0 is played by a client that moves only when its account stream says so (as
    cardkit/client.py does): a turn not announced would stall the match."""
    users, tokens = players
    rng = random.Random(2)
    with httpx.Client(base_url=server.url, timeout=10) as client, open_stream(
        client, "/api/v1/stream/events/", token=tokens[0], ndjson=True
    ) as account:
        match = start_match(users)
        other = threading.Thread(target=play_by_waiting, args=(server, match, tokens[1]))
        other.start()
        seen = []
        while not seen or seen[-1]["event"] != "match_finished":
            seen.append(account.next())
            if seen[-1]["event"] == "your_turn":
                turn = seen[-1]["data"]
                answer = call(
                    client, "POST", f"/api/v1/matches/{turn['match']}/moves/",
                    headers=headers_for(tokens[0]),
                    json={"ply": turn["ply"], "move": rng.choice(turn["legal_moves"])},
                )  # fmt: skip
                assert answer.status_code == 200, answer.text
        other.join(30)
    assert seen[0]["event"] == "match_started" and seen[0]["data"]["match"] == match.pk
    assert seen[0]["data"]["your_seats"] == [0]
    assert seen[-1]["data"]["result"] is not None
    turns = [e["data"]["ply"] for e in seen if e["event"] == "your_turn"]
    assert turns == [m.ply for m in match.moves.order_by("ply") if m.seat == 0]


def play_by_waiting(server: LiveServer, match: Match, token: str) -> None:
    """Play seat 1 as an old client does: long-poll ``wait/``, move on its turn."""
    rng = random.Random(4)
    base = f"/api/v1/matches/{match.pk}"
    with httpx.Client(base_url=server.url, timeout=15) as client:
        after = 0
        while True:
            answer = call(
                client, "GET", f"{base}/wait/?timeout=10&after_ply={after}",
                headers=headers_for(token),
            )
            assert answer.status_code == 200, answer.text
            view = answer.json()
            if view["status"] != "active":
                return
            after = view["ply"]
            if view["your_turn"]:
                call(
                    client, "POST", f"{base}/moves/", headers=headers_for(token),
                    json={"ply": after, "move": rng.choice(view["legal_moves"])},
                )  # fmt: skip


def test_wait_keeps_its_contract_and_wakes_on_a_move(server, players):
    users, tokens = players
    match = start_match(users)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        # The seat not to move waits for its turn.
        waiting = 1 - match.to_move
        result: dict = {}

        def wait() -> None:
            result["answer"] = client.get(
                f"/api/v1/matches/{match.pk}/wait/?timeout=10",
                headers=headers_for(tokens[waiting]),
            )

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(0.3)
        play_over_http(server, match, tokens, moves=1)
        thread.join(10)
        answer = result["answer"]
        assert answer.status_code == 200
        body = answer.json()
        assert body["ply"] == 1 and body["your_turn"] is True and body["seat"] == waiting
        me = client.get(f"/api/v1/matches/{match.pk}/me/", headers=headers_for(tokens[waiting]))
        assert body == me.json()
        timed_out = client.get(
            f"/api/v1/matches/{match.pk}/wait/?timeout=0.2&seat={1 - waiting}",
            headers=headers_for(tokens[1 - waiting]),
        )
        assert timed_out.status_code == 200 and timed_out.json()["ply"] == 1
        missing = client.get("/api/v1/matches/999999/wait/?timeout=1")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        bad = client.get(f"/api/v1/matches/{match.pk}/wait/?timeout=99")
        assert bad.status_code == 400


def test_a_waiter_subscribed_just_before_a_move_commits_is_woken(server, players):
    users, tokens = players
    match = start_match(users)
    rng = random.Random(3)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for _ in range(25):
            match.refresh_from_db()
            if match.status != Match.Status.ACTIVE:
                break
            move = rng.choice(match_state(match).legal_moves())
            ply = match.ply
            moved = threading.Thread(
                target=match_move_submit,
                kwargs={"match_id": match.pk, "seat": match.to_move, "ply": ply, "move": move},
            )
            started = time.monotonic()
            with open_stream(client, f"/api/v1/matches/{match.pk}/stream/") as reader:
                moved.start()  # races the stream's subscribe-then-read
                event = reader.next()
                if event["data"]["ply"] == ply:
                    event = reader.until("state")[-1]
            moved.join()
            assert event["data"]["ply"] == ply + 1
            assert time.monotonic() - started < 5


def test_open_streams_beyond_the_cap_are_answered_429(server, players):
    users, tokens = players
    # The server runs in this process: streams of earlier tests that their clients closed
    # are given back once the server notices the closed connection.
    # With Redis, earlier tests' servers in other processes (stopped without closing their
    # streams) count there until their heartbeat lapses, and a count of this process that
    # Redis missed until its next beat: the cap sees those too.
    wait_until(
        lambda: not stream_caps._open_by_ip and not _streams_counted_in_redis("127.0.0.1"),
        timeout=2 * settings.LIVE_CAPS_TTL + 5, what="earlier tests' streams to end",
    )  # fmt: skip
    match = start_match(users)
    path = f"/api/v1/matches/{match.pk}/stream/"
    caps = override_settings(LIVE_MAX_STREAMS_PER_ACCOUNT=2, LIVE_MAX_STREAMS_PER_IP=3)
    with caps, httpx.Client(base_url=server.url, timeout=10) as client:
        with open_stream(client, path, token=tokens[0]), open_stream(
            client, path, token=tokens[0]
        ):
            refused = client.get(path, headers=headers_for(tokens[0]))
            assert refused.status_code == 429
            assert refused.headers["Retry-After"]
            assert refused.json()["error"]["code"] == "too_many_streams"
            with open_stream(client, path):  # anonymous: the IP's third
                by_ip = client.get(path)
                assert by_ip.status_code == 429
                assert by_ip.json()["error"]["detail"]["per"] == "IP address"
        # Closed streams give their places back, once the server notices the closed
        # connections (at once on a quiet machine, later on a busy one: asked again).
        wait_until(
            lambda: _opens(client, path, tokens[0]), timeout=10,
            what="a closed stream's place given back",
        )  # fmt: skip


def _opens(client: httpx.Client, path: str, token: str) -> bool:
    """Open a stream and read its first event, "state"; False if the cap refuses it."""
    with client.stream("GET", path, headers=headers_for(token)) as response:
        if response.status_code == 429:
            return False
        assert response.status_code == 200, response.read()
        return EventReader(response).next()["event"] == "state"


def _streams_counted_in_redis(ip: str) -> int:
    """Return the streams of ``ip`` that this process and live others count in Redis (0
    without Redis), as the caps' admission script reads them."""
    shared = stream_caps.shared_caps()
    if shared is None:
        return 0
    now = time.time()
    alive = f"{shared.prefix}alive"
    total = 0
    for owner, count in shared.redis.hgetall(f"{shared.prefix}ip:{ip}").items():
        expires = shared.redis.zscore(alive, owner)
        if owner.decode() == shared.me or (expires is not None and expires > now):
            total += int(count)
    return total


def test_streams_end_with_a_reconnect_event_when_the_server_stops(server, players):
    users, tokens = players
    match = start_match(users)
    client = httpx.Client(base_url=server.url, timeout=10)
    match_path = f"/api/v1/matches/{match.pk}/stream/"
    with client, open_stream(client, match_path) as reader, open_stream(
        client, "/api/v1/stream/events/", token=tokens[0], ndjson=True
    ) as account:
        assert reader.next()["event"] == "state"
        assert account.next()["event"] == "match_started"
        server.shutdown_streams()
        assert reader.until("reconnect")[-1]["event"] == "reconnect"
        assert account.until("reconnect")[-1]["event"] == "reconnect"
        with pytest.raises(EOFError):
            reader.next()


def test_bad_stream_requests_get_the_error_body(server, players):
    users, tokens = players
    match = start_match(users)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        cases = [
            ("/api/v1/matches/999999/stream/", None, {}, 404),
            (f"/api/v1/matches/{match.pk}/stream/?seat=1", tokens[0], {}, 403),
            (f"/api/v1/matches/{match.pk}/stream/?after_ply=x", None, {}, 400),
            (f"/api/v1/matches/{match.pk}/stream/", None, {"Last-Event-ID": "x"}, 400),
            ("/api/v1/stream/events/", None, {}, 401),
        ]
        for path, token, more, status in cases:
            answer = client.get(path, headers=headers_for(token, **more))
            assert answer.status_code == status, (path, answer.text)
            assert "error" in answer.json()


async def _hold_streams(url: str, path: str, count: int, opened: threading.Event) -> list:
    """Open ``count`` SSE streams on ``path``; return each one's event (name, id) list.
    ``opened`` is set once every stream has shown its first view."""
    import asyncio

    host, port = url.removeprefix("http://").split(":")
    seen: list[list] = [[] for _ in range(count)]
    ready = [0]

    async def one(index: int) -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        event_id = None
        try:
            while True:
                line = await asyncio.wait_for(reader.readline(), 60)
                if not line:
                    return
                if line.startswith(b"id: "):
                    event_id = int(line[4:])
                elif line.startswith(b"event: "):
                    name = line[7:].strip().decode()
                    seen[index].append((name, event_id))
                    if len(seen[index]) == 1:  # its first view: the stream is under way
                        ready[0] += 1
                        if ready[0] == count:
                            opened.set()
                    if name == "end":
                        return
        finally:
            writer.close()

    await asyncio.gather(*(one(i) for i in range(count)))
    return seen


@pytest.mark.real_services
def test_500_streams_see_every_ply_while_a_client_plays_and_gets_stay_answered(
    server, players
):
    import asyncio
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
    users, tokens = players
    match = start_match(users)
    path = f"/api/v1/matches/{match.pk}/stream/"
    opened = threading.Event()
    found: dict = {}
    caps = override_settings(LIVE_MAX_STREAMS_PER_IP=0)
    with caps:
        holder = threading.Thread(
            target=lambda: found.update(
                seen=asyncio.run(_hold_streams(server.url, path, 500, opened))
            )
        )
        holder.start()
        assert opened.wait(60), "500 streams did not open"
        probe: list[int] = []

        def get_games() -> None:
            with httpx.Client(base_url=server.url, timeout=5) as client:
                while holder.is_alive() and len(probe) < 200:
                    probe.append(client.get("/api/v1/games/").status_code)
                    time.sleep(0.05)

        prober = threading.Thread(target=get_games)
        prober.start()
        last = play_over_http(server, match, tokens, moves=20)
        with httpx.Client(base_url=server.url, timeout=10) as client:  # then the end
            resigned = client.post(
                f"/api/v1/matches/{match.pk}/resign/", headers=headers_for(tokens[0]), json={}
            )
            assert resigned.status_code == 200, resigned.text
        holder.join(60)
        prober.join(10)
    assert probe and set(probe) == {200}  # every GET answered within its 5 s timeout
    for events in found["seen"]:
        assert events[0] == ("state", 0)
        moves = [event_id for name, event_id in events if name == "move"]
        assert moves == list(range(1, last + 1))
        assert events[-1][0] == "end"


@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous")
def test_off_the_asgi_server_a_stream_answers_what_there_is_and_ends(players, client):
    """Django's test client (as a WSGI server) cannot hold a stream: it gets the state."""
    users, tokens = players
    match = start_match(users)
    answer = client.get(f"/api/v1/matches/{match.pk}/stream/")
    body = b"".join(answer).decode()  # Django consumes the async stream for a sync caller
    assert answer["Content-Type"] == "text/event-stream"
    assert "event: state" in body and "id: 0" in body
    account = client.get(
        "/api/v1/stream/events/", HTTP_AUTHORIZATION=f"Token {tokens[0]}",
        HTTP_ACCEPT="application/x-ndjson",
    )  # fmt: skip
    lines = b"".join(account).decode().split("\n")
    assert '"event":"match_started"' in lines[0]
