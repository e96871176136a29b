"""The bot kit's server: it answers signed requests and refuses every other one.

No Django: run with ``-p no:django --noconftest``.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cardkit import BotServer, ReplayGuard, cli, make_server
from cardkit import serve as serve_command
from cardkit.caller import BotCaller
from cardkit.engine import load_game
from cardkit.protocol import Fault, build_ping, build_request, signed_headers

SECRET = "kit-secret"
REPO = Path(__file__).resolve().parents[2]


def first_legal(view: dict, legal_moves: list[dict]) -> dict:
    return legal_moves[0]


@pytest.fixture
def kit_bot() -> Iterator[Callable[..., tuple[BotServer, str]]]:
    """Return ``start(choose) -> (server, url)``: the kit's server on an ephemeral port."""
    servers: list[BotServer] = []

    def start(choose=first_legal) -> tuple[BotServer, str]:
        server = make_server(choose, 0, SECRET)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return server, f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def move_request(game: str = "durak", players: int = 2) -> dict:
    state = load_game(game, players=players).deal(seed=3, dealer=0)
    seat = state.to_move
    return build_request(
        match_id=1,
        game=game,
        options={"players": players},
        seat=seat,
        view=state.view(seat),
        legal_moves=state.legal_moves(),
        deadline=datetime.now(UTC) + timedelta(seconds=1),
        time_limit=1,
    )


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    """POST with the standard library, headers exactly as given; return status and JSON."""
    port = int(url.rsplit(":", 1)[1].strip("/"))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("POST", "/", body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def encode(payload: dict) -> bytes:
    return json.dumps(payload).encode()


# -- signed requests ----------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), [("durak", 2), ("volynshchik", 3)])
def test_kit_answers_the_arena_with_the_authors_move(kit_bot, game, players):
    _server, url = kit_bot()
    payload = move_request(game, players)
    with BotCaller(allow_private=True) as caller:
        answer = caller.request_move(url, SECRET, payload, 1.0)
    assert answer.ok, answer
    assert answer.move == payload["legal_moves"][0]


def test_kit_answers_a_ping(kit_bot):
    _server, url = kit_bot()
    with BotCaller(allow_private=True) as caller:
        assert caller.ping(url, SECRET, 1.0).ok
    body = encode(build_ping())
    assert post(url, body, signed_headers(SECRET, body)) == (200, {"pong": True})


def test_choose_gets_the_view_and_the_legal_moves(kit_bot):
    calls = []

    def choose(view, legal_moves):
        calls.append((view, legal_moves))
        return legal_moves[-1]

    _server, url = kit_bot(choose)
    payload = move_request()
    body = encode(payload)
    status, answer = post(url, body, signed_headers(SECRET, body))
    assert (status, answer) == (200, {"move": payload["legal_moves"][-1]})
    assert calls == [(payload["view"], payload["legal_moves"])]


# -- refused requests ---------------------------------------------------------------------


def refuse_everything(view, legal_moves):
    pytest.fail("choose() was called for a request that should have been refused")


def test_unsigned_request_is_refused(kit_bot):
    _server, url = kit_bot(refuse_everything)
    status, answer = post(url, encode(move_request()), {"Content-Type": "application/json"})
    assert status == 401
    assert "missing X-Arena-Timestamp" in answer["error"]


def test_request_signed_with_another_secret_is_refused(kit_bot):
    _server, url = kit_bot(refuse_everything)
    body = encode(move_request())
    status, answer = post(url, body, signed_headers("not-the-secret", body))
    assert (status, answer) == (401, {"error": "wrong signature"})


def test_request_changed_after_signing_is_refused(kit_bot):
    _server, url = kit_bot(refuse_everything)
    body = encode(move_request())
    headers = signed_headers(SECRET, body)
    status, _answer = post(url, body.replace(b'"seat": 0', b'"seat": 1'), headers)
    assert status == 401


def test_garbled_signature_is_refused(kit_bot):
    _server, url = kit_bot(refuse_everything)
    body = encode(move_request())
    headers = signed_headers(SECRET, body) | {"X-Arena-Signature": "sha256=zz"}
    assert post(url, body, headers)[0] == 401


def test_stale_request_is_refused(kit_bot):
    _server, url = kit_bot(refuse_everything)
    body = encode(move_request())
    status, answer = post(url, body, signed_headers(SECRET, body, now=time.time() - 120))
    assert status == 401
    assert "stale" in answer["error"]


def test_replayed_request_is_refused(kit_bot):
    _server, url = kit_bot()
    body = encode(move_request())
    headers = signed_headers(SECRET, body)
    assert post(url, body, headers)[0] == 200
    assert post(url, body, headers) == (401, {"error": "replayed request id"})


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"type": "move", "protocol": 99, "view": {}, "legal_moves": []}',
        b'{"type": "move", "protocol": 1, "view": "x", "legal_moves": []}',
        b'{"type": "dance", "protocol": 1}',
    ],
)
def test_signed_but_bad_body_is_a_400(kit_bot, body):
    _server, url = kit_bot(refuse_everything)
    status, answer = post(url, body, signed_headers(SECRET, body))
    assert status == 400
    assert answer["error"]


def test_failing_choose_is_a_500_and_the_arena_forfeits_the_bot(kit_bot):
    def crash(view, legal_moves):
        raise RuntimeError("the author's bug")

    _server, url = kit_bot(crash)
    with BotCaller(allow_private=True) as caller:
        answer = caller.request_move(url, SECRET, move_request(), 1.0)
    assert (answer.fault, answer.detail) == (Fault.HTTP_STATUS, "HTTP 500")


def test_arena_with_the_wrong_secret_gets_401(kit_bot):
    _server, url = kit_bot(refuse_everything)
    with BotCaller(allow_private=True) as caller:
        answer = caller.request_move(url, "wrong", move_request(), 1.0)
    assert (answer.fault, answer.detail) == (Fault.HTTP_STATUS, "HTTP 401")


def test_server_needs_a_secret():
    with pytest.raises(ValueError, match="secret"):
        make_server(first_legal, 0, "")


# -- the replay guard ---------------------------------------------------------------------


def test_replay_guard_forgets_ids_after_keep_for():
    guard = ReplayGuard(keep_for=120)
    assert guard.first_time("a", now=0)
    assert not guard.first_time("a", now=119)
    assert guard.first_time("a", now=240)


def test_replay_guard_memory_is_bounded():
    guard = ReplayGuard(keep_for=120, max_ids=3)
    for number in range(10):
        assert guard.first_time(str(number), now=number)
    assert len(guard._seen) == 3
    assert not guard.first_time("9", now=10)


# -- the sample bot -----------------------------------------------------------------------


def test_random_strategy_is_played_without_bots_builtin(monkeypatch):
    monkeypatch.setitem(sys.modules, "cardkit.players", None)
    choose = serve_command.load_strategy("random", seed=1)
    payload = move_request()
    assert choose(payload["view"], payload["legal_moves"]) in payload["legal_moves"]
    with pytest.raises(ValueError, match="needs cardkit.players"):
        serve_command.load_strategy("greedy")


@pytest.mark.parametrize(("game", "players"), [("durak", 2), ("volynshchik", 4)])
def test_greedy_strategy_plays_legal_moves(game, players):
    choose = serve_command.load_strategy("greedy", seed=1)
    payload = move_request(game, players)
    assert choose(payload["view"], payload["legal_moves"]) in payload["legal_moves"]


def test_command_needs_a_secret(monkeypatch, capsys):
    monkeypatch.delenv(serve_command.SECRET_ENV, raising=False)
    with pytest.raises(SystemExit):
        cli.main(["serve", "random"])
    assert "secret" in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_sample_bot_command_plays_a_move():
    port = free_port()
    strategy = "greedy"
    command = [sys.executable, "-m", "cardkit", "serve", strategy, "--port", str(port)]
    env = os.environ | {serve_command.SECRET_ENV: SECRET}
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        with BotCaller(allow_private=True) as caller:
            for _ in range(100):
                if caller.ping(url, SECRET, 1.0).ok or process.poll() is not None:
                    break
                time.sleep(0.1)
            payload = move_request()
            answer = caller.request_move(url, SECRET, payload, 2.0)
        assert answer.ok, (answer, process.stderr.read() if process.poll() is not None else "")
        assert answer.move in payload["legal_moves"]
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()


def test_kit_bot_side_runs_on_the_standard_library_alone(tmp_path):
    # The bot's side (cardkit.server, cardkit.serve and the protocol they import), copied
    # out of the repository and run without site-packages, as cardkit/__init__.py promises.
    repository = Path(__file__).resolve().parents[2]
    (tmp_path / "cardkit").mkdir()
    for path in (repository / "cardkit").glob("*.py"):
        name = path.relative_to(repository)
        (tmp_path / name).write_bytes((repository / name).read_bytes())
    code = (
        "import cardkit.server, cardkit.serve, cardkit.protocol; "
        "print(cardkit.protocol.verify_headers.__name__)"
    )

    run = subprocess.run(
        [sys.executable, "-S", "-E", "-c", code],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )

    assert run.returncode == 0, run.stderr
