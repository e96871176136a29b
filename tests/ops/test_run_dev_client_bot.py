"""`make run`'s arena serves a client bot of the kit that plays from its account stream.

``scripts/run-dev`` (SQLite, the embedded broker, the embedded hub: no server to install)
is started with a data folder and a port of its own; the kit's ``ClientBot`` plays durak
against the built-in ``random``, which the worker plays, with 2 s a move. It moves only
when the account stream (``stream/events/``) announces its turn, so a turn that follows a
worker's move and does not reach the stream loses on time. Parametrised by hub: the
embedded one in the SQLite pass, Redis (``LIVE_PUBSUB_URL``) in the PostgreSQL + Redis
pass, so each pass runs it once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time

import httpx
import pytest

from benchmarks.harness import free_port, stop_process_group, wait_until
from cardkit.client import ClientBot
from cardkit.serve import load_strategy
from tests.processes import BASE_DIR, clean_environment

MATCHES = 20
IN_FLIGHT = 4  # matches under way at once: the client answers its turns one at a time
MOVE_TIME_LIMIT = 2
# Seconds for the matches once the arena answers (they took 80-110 s on this shared
# 2-core machine).
PLAY_BUDGET = 150
REAL_SERVICES = os.environ.get("CARDSERVER_REAL_SERVICES") == "1"

HUBS = [
    pytest.param(
        "embedded",
        marks=pytest.mark.skipif(
            REAL_SERVICES, reason="runs in the SQLite pass: it needs no PostgreSQL or Redis"
        ),
    ),
    pytest.param("redis", marks=pytest.mark.real_services),
]


@contextlib.contextmanager
def run_dev(tmp_path, **variables: str):
    """Start scripts/run-dev (no ladder) with its own data folder and port; yield its URL
    once it answers the health check, and stop every process it started afterwards."""
    port = free_port()
    environment = clean_environment(
        tmp_path / "var", RUN_ADDRESS=f"127.0.0.1:{port}", RUN_LADDER="0", **variables
    )
    environment["PATH"] = f"{BASE_DIR / '.venv' / 'bin'}:{environment['PATH']}"
    url = f"http://127.0.0.1:{port}"
    with (tmp_path / "run-dev.log").open("w") as log:
        process = subprocess.Popen(
            [str(BASE_DIR / "scripts" / "run-dev")], cwd=BASE_DIR, env=environment,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            wait_until(lambda: _healthy(url, process), timeout=120, what="run-dev to answer")
            yield url
        finally:
            stop_process_group(process)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def _healthy(url: str, process: subprocess.Popen) -> bool:
    if process.poll() is not None:
        raise RuntimeError(f"run-dev exited with {process.returncode}")
    try:
        return httpx.get(f"{url}/api/v1/health/", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def register_client_bot(api: httpx.Client) -> tuple[str, str]:
    """Sign up an account and register its client bot; return the account's token and
    the bot's."""
    account = api.post(
        "/accounts/signup/", json={"username": "alice", "password": "a-long-passphrase"}
    )
    assert account.status_code == 201, account.text
    token = account.json()["token"]
    bot = api.post(
        "/bots/", headers={"Authorization": f"Token {token}"},
        json={"name": "streamy", "kind": "client", "games": ["durak"]},
    )  # fmt: skip
    assert bot.status_code == 201, bot.text
    return token, bot.json()["token"]


def play_matches(api: httpx.Client, token: str) -> list[dict]:
    """Create MATCHES matches of the bot against ``random``, IN_FLIGHT at a time, the bot
    in seat 0 and 1 by turns; return each one as it ended (or as it stands at the end of
    PLAY_BUDGET)."""
    auth = {"Authorization": f"Token {token}"}
    created, running, ended = 0, [], []
    deadline = time.monotonic() + PLAY_BUDGET
    while (created < MATCHES or running) and time.monotonic() < deadline:
        while created < MATCHES and len(running) < IN_FLIGHT:
            seats = [{"bot": "streamy"}, {"bot": "random"}][:: 1 if created % 2 == 0 else -1]
            answer = api.post("/matches/", headers=auth, json={
                "game": "durak", "players": 2, "move_time_limit": MOVE_TIME_LIMIT,
                "seats": seats,
            })  # fmt: skip
            assert answer.status_code == 201, answer.text
            running.append(answer.json()["id"])
            created += 1
        time.sleep(0.5)
        for match_id in list(running):
            match = api.get(f"/matches/{match_id}/").json()
            if match["status"] != "active":
                running.remove(match_id)
                ended.append(match)
    return ended + [api.get(f"/matches/{match_id}/").json() for match_id in running]


@pytest.mark.parametrize("hub", HUBS)
def test_a_kit_client_bot_on_run_dev_plays_20_matches_from_its_account_stream_none_lost_on_time(
    tmp_path, hub
):
    variables = {}
    if hub == "redis":
        broker = os.environ.get("CELERY_BROKER_URL", "")
        if not broker.startswith("redis://"):
            pytest.skip("needs Redis (CELERY_BROKER_URL)")
        variables["LIVE_PUBSUB_URL"] = broker
    turns = []
    strategy = load_strategy("greedy", seed=1)

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        turns.append(view)
        return strategy(view, legal_moves)

    started = time.monotonic()
    with run_dev(tmp_path, **variables) as url, httpx.Client(
        base_url=f"{url}/api/v1", timeout=10
    ) as api:
        token, bot_token = register_client_bot(api)
        client = ClientBot(url, bot_token, choose)
        playing = threading.Thread(target=client.run, daemon=True)
        playing.start()
        try:
            matches = play_matches(api, token)
        finally:
            client.stop()
            playing.join(10)
        moves = sum(
            1
            for match in matches
            for step in api.get(f"/matches/{match['id']}/replay/").json()["steps"]
            if step["ply"] > 0 and step["seat"] == _seat(match)
        )
    took = time.monotonic() - started
    finished = [match for match in matches if match["status"] == "finished"]
    on_time = [match for match in finished if match["end_reason"] == "timeout"]
    log = (tmp_path / "run-dev.log").read_text()
    print(
        f"\nrun-dev, {hub} hub: {len(finished)} of {MATCHES} matches finished, "
        f"{len(turns)} turns of the client bot, {len(on_time)} lost on time, {took:.0f} s"
    )
    assert len(matches) == MATCHES
    assert not on_time, [(m["id"], m["forfeit_reason"]) for m in on_time]
    assert len(finished) == MATCHES, [(m["id"], m["status"], m["ply"]) for m in matches]
    assert len(turns) == moves  # each turn announced once, and answered
    assert "Traceback" not in log, log[-3000:]


def _seat(match: dict) -> int:
    return next(seat["index"] for seat in match["seats"] if seat["bot"] == "streamy")
