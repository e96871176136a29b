"""The kit's README is a tutorial that works: its shell blocks, in order, run as one
script in a fresh virtualenv (``pip install './kit[rl]'`` from this checkout), in a home
of their own, against an arena process of their own (uvicorn on a SQLite file, as the
install test's). Then the bots it put online are seen playing: the HTTP bot pinged
healthy and eligible for the ladder, the client bot of its config file playing a match,
and the match of the challenge it accepted by its file's rules.

It runs in every pass that collects it; `.ci/run` leaves it to the SQLite pass, since its
arena uses no service of the PostgreSQL pass and would run the same there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
from pathlib import Path

import httpx
import pytest

from benchmarks.harness import free_port, stop_process_group, wait_until
from tests.kit.test_install import Arena

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "kit" / "README.md"

def readme_script() -> str:
    """Return the README's ``sh`` blocks, in order, as one script."""
    blocks = re.findall(r"^```sh\n(.*?)^```$", README.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) >= 6, "the README's shell blocks were not found"
    return "".join(blocks)


def test_every_command_of_the_readme_is_in_a_block_this_test_runs():
    text = README.read_text(encoding="utf-8")
    outside = re.sub(r"^```sh\n.*?^```$", "", text, flags=re.S | re.M)

    # A command shown outside the blocks would not be run: every command is in a block.
    assert not re.search(r"^\s*(\$ )?(cardkit|pip|curl|python) ", outside, re.M)
    assert "cardkit client --config bot.toml" in readme_script()


@pytest.mark.timeout(900)
def test_the_readme_runs_from_pip_install_to_a_bot_on_the_arena(tmp_path_factory):
    where = tmp_path_factory.mktemp("readme")
    arena = Arena(where / "arena")
    arena.var_dir.mkdir()
    arena.set_up()
    prefix = where / "venv"
    venv.create(prefix, with_pip=True)
    home = where / "home"
    home.mkdir()
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PATH": f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "ARENA": arena.url,
        "PORT": str(free_port()),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    log = where / "readme.log"
    arena.start()
    try:
        with log.open("w") as output:
            # Its own session: the bots the script leaves running stop with it below.
            script = subprocess.Popen(
                ["bash", "-euo", "pipefail", "-c", readme_script()], cwd=ROOT,
                env=environment, stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
            try:
                status = script.wait(timeout=600)
                assert status == 0, log.read_text()[-4000:]
                folder = home / "mybot"
                _assert_the_http_bot_is_healthy(arena)
                _assert_the_client_bot_plays_a_match(arena, folder)
                _assert_the_client_bot_accepted_the_challenge_and_played_it(arena, folder)
            finally:
                stop_process_group(script, timeout=10)
    finally:
        arena.stop()

    text = log.read_text()
    assert "cardkit " in text and "Traceback" not in text
    assert "H1 accepted: mybot.py:choose is better than random" in text
    assert "saved the policy to policy.npz" in text
    assert "the arena would play this bot" in text
    assert (home / "mybot" / "deal.html").is_file()


def _assert_the_http_bot_is_healthy(arena: Arena) -> None:
    bot = httpx.get(f"{arena.url}/api/v1/bots/mybot/", timeout=10).json()
    assert bot["kind"] == "http" and bot["healthy"] and bot["enabled"], bot


def _assert_the_client_bot_plays_a_match(arena: Arena, folder: Path) -> None:
    token = json.loads((folder / "signup.json").read_text())["token"]
    response = httpx.post(
        f"{arena.url}/api/v1/matches/", headers={"Authorization": f"Token {token}"},
        json={"game": "durak", "players": 2, "move_time_limit": 30,
              "seats": [{"bot": "mybot-client"}, {"bot": "greedy"}]},
        timeout=30,
    )  # fmt: skip
    assert response.status_code == 201, response.text
    match_id = response.json()["id"]
    wait_until(lambda: arena.finished([match_id]), timeout=120, what="the client bot's match")
    (match,) = arena.finished([match_id])
    assert match["status"] == "finished" and match["forfeit_seat"] is None, match
    client_log = (folder / "client.log").read_text()
    assert "playing as bot mybot-client" in client_log
    assert re.search(rf"match {match_id} ply \d+ seat 0: \{{.*\}}, thought \d+ ms", client_log)


def _assert_the_client_bot_accepted_the_challenge_and_played_it(
    arena: Arena, folder: Path
) -> None:
    challenge = json.loads((folder / "challenge.json").read_text())
    assert challenge["status"] == "accepted", challenge
    assert challenge["answered_by"] == "bot:mybot-client", challenge
    match_id = challenge["match"]
    wait_until(lambda: arena.finished([match_id]), timeout=120, what="the challenge's match")
    (match,) = arena.finished([match_id])
    assert match["status"] == "finished" and match["forfeit_seat"] is None, match
    assert match["rated"] is False, match
    client_log = (folder / "client.log").read_text()
    assert f"challenge {challenge['id']} from bob: accepted" in client_log
    assert re.search(rf"match {match_id} ply \d+ seat 1: \{{.*\}}, thought \d+ ms", client_log)
