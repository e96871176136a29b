"""The ``cardkit`` command: serve, check, play and client, and the one line each prints
for a problem the user can fix (a secret or token refused, a server out of reach, a move
that is not JSON)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import cardkit
from benchmarks.harness import free_port, stop_process_group, wait_until
from cardkit.caller import BotCaller
from cardkit.cli import main
from cardkit.client import ClientBot
from cardkit.protocol import Fault, move_request
from cardkit.specs import load_bot
from tests.bots.test_client_runner import seat_client_bot
from tests.bots.test_kit import move_request as request_for_durak

REPO = Path(__file__).resolve().parents[2]
SECRET = "cli-secret"

# A Python bot: the last legal move.
LAST_MOVE = "def choose(view, legal_moves):\n    return legal_moves[-1]\n"
# A Python bot whose move holds a set, which JSON cannot write.
SET_MOVE = "def choose(view, legal_moves):\n    return {**legal_moves[0], 'cards': {'AS'}}\n"
# A command bot that keeps the requests it got (one JSON line each) and plays the first move.
RECORDING = """
import json, sys
with open(sys.argv[1], "a") as seen:
    for line in sys.stdin:
        request = json.loads(line)
        seen.write(line)
        seen.flush()
        print(json.dumps({"move": request["legal_moves"][0]}), flush=True)
"""


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@contextlib.contextmanager
def served(*arguments: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run ``cardkit serve ARGUMENTS --port P --secret SECRET``; yield its URL once it
    answers a signed ping, and the process (its stderr a pipe)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cardkit", "serve", *arguments, "--port", str(port),
         "--secret", SECRET],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        with BotCaller(allow_private=True) as caller:
            wait_until(
                lambda: process.poll() is not None or caller.ping(url, SECRET, 1.0).ok,
                timeout=30, what="cardkit serve",
            )
        assert process.poll() is None, process.stderr.read()
        yield url, process
    finally:
        stop_process_group(process)


def test_version_prints_cardkit_and_the_packages_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"cardkit {cardkit.__version__}\n"


def test_serve_runs_a_python_file_bot_that_check_passes(tmp_path, capsys):
    (tmp_path / "mybot.py").write_text(LAST_MOVE)

    with served(f"{tmp_path / 'mybot.py'}:choose") as (url, _process):
        status = main(["check", url, "--secret", SECRET, "--game", "durak", "--deals", "1"])

    assert status == 0, capsys.readouterr().out
    assert "the arena would play this bot" in capsys.readouterr().out


def test_serve_gives_a_command_bot_the_whole_request(tmp_path):
    (tmp_path / "bot.py").write_text(RECORDING)
    seen = tmp_path / "seen.jsonl"
    request = request_for_durak()

    with (
        served(f"cmd:{sys.executable} {tmp_path / 'bot.py'} {seen}") as (url, _process),
        BotCaller(allow_private=True) as caller,
    ):
        answer = caller.request_move(url, SECRET, request, 5.0)

    assert answer.ok, answer
    assert answer.move == request["legal_moves"][0]
    assert json.loads(seen.read_text().splitlines()[-1]) == request


def test_serve_answers_a_move_that_is_not_json_with_500_and_one_line(tmp_path):
    (tmp_path / "setbot.py").write_text(SET_MOVE)

    with served(f"{tmp_path / 'setbot.py'}:choose") as (url, process):
        with BotCaller(allow_private=True) as caller:
            answer = caller.request_move(url, SECRET, request_for_durak(), 5.0)
        stop_process_group(process)
        log = process.stderr.read()

    assert (answer.fault, answer.detail) == (Fault.HTTP_STATUS, "HTTP 500")
    assert "the move is not JSON (Object of type set is not JSON serializable)" in log
    assert "Traceback" not in log


def test_serve_on_a_port_in_use_ends_with_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status = main(["serve", "random", "--port", str(port), "--secret", SECRET])

    assert status == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"cardkit serve: cannot listen on 127.0.0.1:{port}")
    assert "give another --port" in line


def test_serve_takes_a_bot_to_run_not_a_url(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "http://127.0.0.1:9001/", "--secret", SECRET])
    assert exit_.value.code == 2
    assert "is a bot that runs already" in capsys.readouterr().err


def test_check_with_the_wrong_secret_ends_with_one_line(kit_http_bot, capsys):
    url, _server = kit_http_bot(SECRET)

    assert main(["check", url, "--secret", "not-the-secret"]) == 1
    line = one_line(capsys.readouterr().err)
    assert f"the bot at {url} refused the signature (HTTP 401)" in line
    assert "give the secret it was started with" in line


def test_check_of_a_bot_out_of_reach_ends_with_one_line(capsys):
    url = f"http://127.0.0.1:{free_port()}/"

    assert main(["check", url, "--secret", SECRET]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"cardkit check: cannot reach the bot at {url}")
    assert "start it (cardkit serve BOT" in line


def test_play_with_an_http_bot_refusing_the_secret_ends_with_one_line(kit_http_bot, capsys):
    url, _server = kit_http_bot(SECRET)

    status = main(["play", "--bot", url, "--bot", "random", "--secret", "nope", "--games", "1"])

    assert status == 1
    assert "refused the signature" in one_line(capsys.readouterr().err)


def test_play_exits_1_when_a_bot_forfeits_by_a_move_that_is_not_json(tmp_path, capsys):
    (tmp_path / "bot.py").write_text("import sys\nfor line in sys.stdin:\n    print('e2e4')\n")

    status = main([
        "play", "--bot", f"cmd:{sys.executable} {tmp_path / 'bot.py'}", "--bot", "random",
        "--games", "2",
    ])

    err = capsys.readouterr().err
    assert status == 1
    assert "forfeits (malformed_response): an answer is one line of JSON" in err
    assert err.strip().splitlines()[-1] == (
        "cardkit play: 2 of 2 deals ended by a forfeit (the lines above say why): fix the "
        "bot that forfeits"
    )


@pytest.mark.django_db(transaction=True)
def test_client_with_a_refused_token_ends_with_one_line(live_server, capsys):
    status = main(["client", "random", "--server", live_server.url, "--token", "not-a-token"])

    assert status == 1
    line = _errors(capsys)
    assert line.startswith("cardkit client: the arena refused the token (HTTP 401")
    assert "give the token shown when the bot was registered" in line


def test_client_with_an_arena_out_of_reach_ends_with_one_line(capsys):
    server = f"http://127.0.0.1:{free_port()}"

    assert main(["client", "random", "--server", server, "--token", "t"]) == 1
    line = _errors(capsys)
    assert line.startswith(f"cardkit client: cannot reach the arena at {server} (ConnectError")
    assert "start it, or give its URL with --server" in line


@pytest.mark.timeout(120)
@pytest.mark.django_db(transaction=True)
def test_client_stops_with_one_line_on_a_move_that_is_not_json(
    live_server, user, celery_eager, tmp_path, capsys
):
    (tmp_path / "setbot.py").write_text(SET_MOVE)
    token, (match,) = seat_client_bot(user, "durak", 2)

    status = main([
        "client", f"{tmp_path / 'setbot.py'}:choose", "--server", live_server.url,
        "--token", token,
    ])

    assert status == 1
    line = _errors(capsys)
    assert line.startswith(f"cardkit client: match {match.pk} ply ")
    assert "the bot's move is not JSON (Object of type set is not JSON serializable)" in line


@pytest.mark.timeout(120)
@pytest.mark.django_db(transaction=True)
def test_client_plays_a_command_bot_with_the_request_an_http_bot_gets(
    live_server, user, celery_eager, tmp_path
):
    (tmp_path / "bot.py").write_text(RECORDING)
    seen = tmp_path / "seen.jsonl"
    token, (match,) = seat_client_bot(user, "volynshchik", 3)
    answer, close = load_bot(f"cmd:{sys.executable} {tmp_path / 'bot.py'} {seen}")

    try:
        last = ClientBot(live_server.url, token, None, answer=answer).play_match(match.pk)
    finally:
        close()

    assert last["status"] == "finished"
    requests = [json.loads(line) for line in seen.read_text().splitlines()]
    assert requests and {request["match_id"] for request in requests} == {match.pk}
    expected_keys = set(move_request(
        state=_any_state(), match_id=0, game="volynshchik", options={}, time_limit=1.0
    ))
    assert all(set(request) == expected_keys for request in requests)
    assert all(request["game"] == "volynshchik" and request["seat"] == 0 for request in requests)
    assert all(request["options"]["players"] == 3 for request in requests)


def _any_state():
    from cardkit.engine import load_game

    return load_game("volynshchik", players=3).deal(seed=1)


def _errors(capsys) -> str:
    """Return the one line of stderr that is not a log line (the runner logs with a date)."""
    lines = [
        line for line in capsys.readouterr().err.splitlines()
        if line.startswith("cardkit ") or "Traceback" in line
    ]
    return one_line("\n".join(lines))

