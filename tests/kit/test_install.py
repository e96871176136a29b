"""The kit's artefact: its wheel, installed in a fresh virtualenv with none of the server's
dependencies, runs every command of ``cardkit`` end to end (serve, check, play, replay,
client against an arena this test starts and restarts, --version) and the [rl] extra's checkers.

One virtualenv serves the whole module (built once, the [rl] extra added by the last
test). The module runs in the SQLite pass only: its arena has a SQLite file and the
embedded broker of its own, so the PostgreSQL pass would run the same thing again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import cardkit
from benchmarks.harness import free_port, stop_process_group, wait_until
from tests.processes import clean_environment, run_python

ROOT = Path(__file__).resolve().parents[2]
SECRET = "installed-secret"



class Kit:
    """The installed kit: its wheel and the virtualenv it is installed in."""

    def __init__(self, wheel: Path, prefix: Path) -> None:
        self.wheel = wheel
        self.prefix = prefix
        self.python = str(prefix / "bin" / "python")
        self.command = str(prefix / "bin" / "cardkit")

    def pip_install(self, requirement: str) -> None:
        # The outer pip installs into the new environment (--python): no pip of its own is
        # needed, and the dependencies come from the pip cache or the configured index.
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", self.python, "install", "-q",
             "--disable-pip-version-check", "--no-input", requirement],
            check=True, capture_output=True, text=True,
        )  # fmt: skip

    def run(self, *arguments: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run ``cardkit ARGUMENTS`` from the virtualenv, outside the repository."""
        return subprocess.run(
            [self.command, *arguments], cwd=cwd, capture_output=True, text=True,
            timeout=timeout, env=_outside_environment(),
        )  # fmt: skip

    def start(self, *arguments: str, cwd: Path, log: Path) -> subprocess.Popen:
        with log.open("w") as output:
            return subprocess.Popen(
                [self.command, *arguments], cwd=cwd, stdout=output, stderr=subprocess.STDOUT,
                env=_outside_environment(), start_new_session=True,
            )  # fmt: skip


def _outside_environment() -> dict[str, str]:
    """This environment without what would let the repository's code in."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Kit:
    where = tmp_path_factory.mktemp("kit")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where), "./kit"],
        cwd=ROOT, check=True, capture_output=True,
    )
    (wheel,) = where.glob("cardserver_kit-*.whl")
    venv.create(where / "venv", with_pip=False)
    installed = Kit(wheel, where / "venv")
    installed.pip_install(str(wheel))
    return installed


def one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    return line


@contextlib.contextmanager
def served(kit: Kit, bot: str, cwd: Path) -> Iterator[str]:
    """``cardkit serve BOT`` from the virtualenv; yield its URL once it listens."""
    port = free_port()
    log = cwd / f"serve-{port}.log"
    process = kit.start("serve", bot, "--port", str(port), "--secret", SECRET, cwd=cwd, log=log)
    try:
        wait_until(
            lambda: process.poll() is not None or "listening on" in log.read_text(),
            timeout=60, what=f"cardkit serve {bot}",
        )
        assert process.poll() is None, log.read_text()
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop_process_group(process)


def test_the_wheel_is_the_package_cardkit_whole_and_nothing_else(kit):
    names = zipfile.ZipFile(kit.wheel).namelist()
    info = f"cardserver_kit-{cardkit.__version__}.dist-info/"
    package = {name for name in names if not name.startswith(info)}

    # Its modules and the replay viewer's files (package data the server serves too).
    assert package == {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "cardkit").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert "cardkit/viewer/static/replay.js" in package
    entry_points = zipfile.ZipFile(kit.wheel).read(info + "entry_points.txt").decode()
    assert "cardkit = cardkit.cli:main" in entry_points


def test_the_installed_kit_has_none_of_the_servers_packages_and_knows_its_version(
    kit, tmp_path
):
    probe = (
        "import importlib.util, json\n"
        "names = ['django', 'rest_framework', 'celery', 'kombu', 'psycopg', 'redis', 'gymnasium',\n"
        "         'cardserver', 'games', 'bots', 'tournaments', 'web', 'accounts']\n"
        "print(json.dumps([n for n in names if importlib.util.find_spec(n) is not None]))\n"
    )
    found = subprocess.run(
        [kit.python, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
        check=True,
    )
    version = kit.run("--version", cwd=tmp_path)

    assert json.loads(found.stdout) == []
    assert version.stdout == f"cardkit {cardkit.__version__}\n"


def test_the_installed_command_plays_built_ins_and_writes_replays(kit, tmp_path):
    result = kit.run(
        "play", "--game", "volynshchik", "--players", "3", "--bot", "greedy", "--bot",
        "random", "--bot", "random", "--games", "2", "--replays", str(tmp_path / "replays"),
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr
    assert "2 deals of volynshchik" in result.stdout
    assert len(list((tmp_path / "replays").glob("deal-*.json"))) == 2


def test_the_installed_command_writes_a_replay_as_one_html_file_with_its_seats(kit, tmp_path):
    played = kit.run(
        "play", "--bot", "greedy", "--bot", "random", "--games", "1", "--replays", "replays",
        cwd=tmp_path,
    )
    assert played.returncode == 0, played.stderr

    result = kit.run("replay", "replays/deal-00001.json", "--out", "deal.html", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    text = (tmp_path / "deal.html").read_text(encoding="utf-8")
    document = json.loads((tmp_path / "replays" / "deal-00001.json").read_text())
    assert document["seats"] == ["greedy", "random"]
    assert '"seats":["greedy","random"]' in text
    assert "window.ArenaReplay.open(" in text and "function cardFace" in text
    assert "<script src=" not in text and "<link " not in text


def test_the_installed_sprt_accepts_greedy_over_random(kit, tmp_path):
    result = kit.run(
        "sprt", "--candidate", "greedy", "--baseline", "random", "--max-pairs", "200",
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("H1 accepted: greedy is better than random"), result.stdout


@pytest.mark.parametrize("kind", ["builtin", "file", "command"])
def test_the_installed_check_and_play_pass_a_bot_the_installed_serve_serves(
    kit, tmp_path, kind
):
    (tmp_path / "mybot.py").write_text(
        "def choose(view, legal_moves):\n    return legal_moves[-1]\n"
    )
    (tmp_path / "linebot.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'move': json.loads(line)['legal_moves'][0]}), flush=True)\n"
    )
    bot = {
        "builtin": "greedy",
        "file": "mybot.py:choose",
        "command": f"cmd:{kit.python} linebot.py",
    }[kind]

    with served(kit, bot, tmp_path) as url:
        check = kit.run("check", url, "--secret", SECRET, "--deals", "1", cwd=tmp_path)
        play = kit.run(
            "play", "--bot", url, "--bot", "random", "--secret", SECRET, "--games", "3",
            cwd=tmp_path,
        )

    assert check.returncode == 0, check.stdout + check.stderr
    assert "the arena would play this bot" in check.stdout
    assert play.returncode == 0, play.stderr
    assert "3 deals of durak" in play.stdout


def test_the_installed_check_and_play_name_a_wrong_secret_and_a_bot_out_of_reach(
    kit, tmp_path
):
    nowhere = f"http://127.0.0.1:{free_port()}/"
    with served(kit, "random", tmp_path) as url:
        wrong = kit.run("check", url, "--secret", "not-it", cwd=tmp_path)
        play_wrong = kit.run(
            "play", "--bot", url, "--bot", "random", "--secret", "not-it", cwd=tmp_path
        )
    gone = kit.run("check", nowhere, "--secret", SECRET, cwd=tmp_path)

    assert one_line(wrong).startswith(f"cardkit check: the bot at {url} refused the signature")
    assert one_line(play_wrong).startswith(f"cardkit play: the bot at {url} refused")
    assert one_line(gone).startswith(f"cardkit check: cannot reach the bot at {nowhere}")


# -- client, against an arena of its own ---------------------------------------------------

SETUP = """
import json, django
django.setup()
from django.contrib.auth import get_user_model
from accounts.tokens import token_create
from bots import services
services.builtin_bots_ensure()
user = get_user_model().objects.create_user("installer", password="installer-password")
_, token = services.bot_register(owner=user, name="installed", kind="client", games=["durak"])
print(json.dumps({"user": token_create(user=user)[1], "bot": token}))
"""


class Arena:
    """The server, as ``uvicorn cardserver.asgi`` on a SQLite file of its own, with the
    embedded broker and tasks run in the web process (CELERY_TASK_ALWAYS_EAGER: the
    built-in opponents move in the request that made their turn)."""

    def __init__(self, var_dir: Path) -> None:
        self.var_dir = var_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.variables = {
            "DJANGO_SETTINGS_MODULE": "cardserver.settings",
            "DATABASE_URL": f"sqlite:///{var_dir / 'arena.sqlite3'}",
            "CELERY_TASK_ALWAYS_EAGER": "1",
            "DEBUG": "1",
            "LOG_LEVEL": "WARNING",
        }
        self.process: subprocess.Popen | None = None
        self.tokens: dict[str, str] = {}

    def set_up(self) -> dict[str, str]:
        """Migrate; return the API tokens of a user and of its client bot ``installed``."""
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=ROOT, env=clean_environment(self.var_dir, **self.variables),
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert migrate.returncode == 0, migrate.stderr
        made = run_python(SETUP, self.var_dir, **self.variables)
        assert made.returncode == 0, made.stderr
        return json.loads(made.stdout.strip().splitlines()[-1])

    def start(self) -> None:
        with (self.var_dir / "uvicorn.log").open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "cardserver.asgi:application", "--host",
                 "127.0.0.1", "--port", str(self.port), "--no-access-log"],
                cwd=ROOT, env=clean_environment(self.var_dir, **self.variables),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        wait_until(self.healthy, timeout=60, what="the arena's uvicorn")

    def stop(self) -> None:
        if self.process is not None:
            stop_process_group(self.process, timeout=10)

    def healthy(self) -> bool:
        assert self.process.poll() is None, (self.var_dir / "uvicorn.log").read_text()
        try:
            return httpx.get(f"{self.url}/api/v1/health/", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def create_matches(self, token: str, count: int) -> list[int]:
        """Create ``count`` two-player Durak matches of ``installed`` against greedy."""
        ids = []
        for _ in range(count):
            response = httpx.post(
                f"{self.url}/api/v1/matches/", headers={"Authorization": f"Token {token}"},
                json={"game": "durak", "players": 2, "move_time_limit": 30,
                      "seats": [{"bot": "installed"}, {"bot": "greedy"}]},
                timeout=30,
            )  # fmt: skip
            assert response.status_code == 201, response.text
            ids.append(response.json()["id"])
        return ids

    def finished(self, ids: list[int]) -> list[dict]:
        """Return the matches of ``ids`` that are over."""
        over = []
        for match_id in ids:
            match = httpx.get(f"{self.url}/api/v1/matches/{match_id}/", timeout=10).json()
            if match["status"] in ("finished", "aborted"):
                over.append(match)
        return over


@pytest.fixture(scope="module")
def arena(tmp_path_factory) -> Iterator[Arena]:
    """The arena, migrated and serving; ``arena.tokens`` are its user's and its bot's."""
    started = Arena(tmp_path_factory.mktemp("arena"))
    started.tokens = started.set_up()
    try:
        started.start()
        yield started
    finally:
        started.stop()


@pytest.mark.timeout(420)
def test_the_installed_client_plays_on_an_arena_and_again_after_it_restarts(
    kit, arena, tmp_path
):
    tokens = arena.tokens
    first = arena.create_matches(tokens["user"], 2)
    log = tmp_path / "client.log"
    (tmp_path / "bot.toml").write_text(
        f'server = "{arena.url}"\ntoken = "{tokens["bot"]}"\nbot = "greedy"\n'
        "concurrency = 2\n\n[reconnect]\nfirst = 0.2\nmax = 2\n"
    )
    client = kit.start("client", "--config", "bot.toml", cwd=tmp_path, log=log)
    try:
        wait_until(lambda: len(arena.finished(first)) == 2, timeout=120, what="the 1st matches")
        arena.stop()
        time.sleep(1)  # the client sees the stream end and backs off, the arena down
        arena.start()
        second = arena.create_matches(tokens["user"], 2)
        wait_until(lambda: len(arena.finished(second)) == 2, timeout=120, what="the 2nd matches")
        assert client.poll() is None, log.read_text()
    finally:
        stop_process_group(client, timeout=10)

    matches = arena.finished(first + second)
    assert [match["status"] for match in matches] == ["finished"] * 4, matches
    assert all(match["forfeit_seat"] is None for match in matches), matches
    text = log.read_text()
    assert "playing as bot installed" in text
    # The stream ended with the arena (its reconnect event, or the connection lost).
    assert "asks to reconnect" in text or "event stream:" in text, text
    assert "Traceback" not in text
    # The back-off of the file: every wait at most its max.
    waits = [float(w) for w in re.findall(r"again in ([0-9.]+) s", text)]
    assert all(wait <= 2.0 for wait in waits), waits
    # One line a turn played, with the move and the time the bot took.
    turns = re.findall(r"match (\d+) ply \d+ seat 0: \{.*\}, thought \d+ ms", text)
    assert {int(match) for match in turns} == set(first + second), text


def test_the_installed_client_names_a_refused_token_and_an_arena_out_of_reach(
    kit, arena, tmp_path
):
    refused = kit.run("client", "random", "--server", arena.url, "--token", "nope", cwd=tmp_path)
    nowhere = f"http://127.0.0.1:{free_port()}"
    gone = kit.run("client", "random", "--server", nowhere, "--token", "nope", cwd=tmp_path)

    assert one_line(refused).startswith("cardkit client: the arena refused the token (HTTP 401")
    assert one_line(gone).startswith(f"cardkit client: cannot reach the arena at {nowhere}")


def test_a_saved_policy_plays_from_the_base_install_without_the_rl_extra(kit, tmp_path):
    from cardkit.rl.policy import LinearPolicy

    policy = LinearPolicy.new("durak", players=2)
    policy.b[policy.codec.take] = 1.0  # a policy of its own: it takes whenever it may
    policy.save(tmp_path / "p.npz")

    result = kit.run(
        "play", "--bot", "policy:p.npz", "--bot", "greedy", "--games", "2", cwd=tmp_path
    )

    assert result.returncode == 0, result.stderr
    assert "policy:p.npz" in result.stdout and "2 deals of durak" in result.stdout


# -- the [rl] extra (last: it adds numpy, gymnasium and pettingzoo to the virtualenv) ------

# Gymnasium's check_env on the single-seat environment (made through its registered id,
# so that it has a spec), warnings as errors; PettingZoo's API and seed tests.
RL_CHECKS = """
import warnings
warnings.simplefilter("error")
import gymnasium
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test
import cardkit.rl
from cardkit.rl import env
for game, players in (("durak", 2), ("durak", 4), ("volynshchik", 3)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's advice on Dict observation spaces
        api_test(env(game, players=players), num_cycles=100)
        seed_test(lambda: env(game, players=players), num_cycles=100)
    single = gymnasium.make(f"cardkit/{game.capitalize()}-v0",
                            opponents=["greedy"] * (players - 1), disable_env_checker=True)
    check_env(single.unwrapped)
    assert single.unwrapped.action_masks().any()
print("rl checks passed")
"""


def test_the_rl_extra_installs_and_passes_gymnasium_and_pettingzoo_checks(kit, tmp_path):
    kit.pip_install(f"{kit.wheel}[rl]")

    result = subprocess.run(
        [kit.python, "-I", "-c", RL_CHECKS], cwd=tmp_path, capture_output=True, text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "rl checks passed"
