"""The kit's distribution (kit/pyproject.toml) installs alone and plays without the server."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import importlib.util, json
from bots.kit.arena import play_deals, standings
from bots.kit.players import load_player
names = ["greedy", "random", "strong"]
deals = play_deals("durak", {"players": 3}, [load_player(n) for n in names], games=2)
absent = [m for m in ("django", "rest_framework", "celery", "psycopg", "redis")
          if importlib.util.find_spec(m) is not None]
print(json.dumps({"deals": len(deals), "rows": len(standings(deals, names)), "server": absent}))
"""


@pytest.fixture(scope="module")
def kit_venv(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("kit")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where), "./kit"],
        cwd=ROOT, check=True,
    )
    (wheel,) = where.glob("cardserver_kit-*.whl")
    target = where / "venv"
    venv.create(target, with_pip=False)
    # The outer pip installs into the new environment (--python): no pip of its own is
    # needed, and the dependencies come from the pip cache or the configured index.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(target / "bin" / "python"), "install",
         "-q", "--disable-pip-version-check", "--no-input", str(wheel)],
        check=True,
    )
    return target


def test_the_kit_installs_alone_and_plays_a_deal_without_the_server(kit_venv, tmp_path):
    result = subprocess.run(
        [str(kit_venv / "bin" / "python"), "-I", "-c", PROBE],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    assert result.stdout.strip().splitlines()[-1] == '{"deals": 2, "rows": 3, "server": []}'


def test_the_installed_cardkit_command_plays_and_writes_replays(kit_venv, tmp_path):
    result = subprocess.run(
        [str(kit_venv / "bin" / "cardkit"), "play", "--game", "volynshchik", "--players", "3",
         "--bot", "greedy", "--bot", "random", "--bot", "random", "--games", "2",
         "--replays", str(tmp_path / "replays")],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "2 deals of volynshchik" in result.stdout
    assert len(list((tmp_path / "replays").glob("deal-*.json"))) == 2
