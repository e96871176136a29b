"""`make run`'s arena: one command, no other server, and the leaderboard fills by itself."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

import httpx
import pytest

from benchmarks.harness import free_port, stop_process_group
from tests.processes import BASE_DIR, clean_environment
from tournaments.pools import POOLS


@pytest.mark.real_services
def test_run_dev_serves_an_arena_whose_leaderboard_fills_within_90_seconds(tmp_path):
    port = free_port()
    environment = clean_environment(tmp_path / "var", RUN_ADDRESS=f"127.0.0.1:{port}")
    environment["PATH"] = f"{BASE_DIR / '.venv' / 'bin'}:{environment['PATH']}"
    log = (tmp_path / "run-dev.log").open("w")
    started = time.monotonic()
    process = subprocess.Popen(
        [str(BASE_DIR / "scripts" / "run-dev")],
        cwd=BASE_DIR,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    boards: dict[str, dict] = {}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            while time.monotonic() - started < 90 and process.poll() is None:
                try:
                    boards = {pool: http.get(f"/api/v1/ratings/{pool}/").json() for pool in POOLS}
                except httpx.HTTPError:
                    boards = {}
                if any(board["lines"] for board in boards.values()):
                    break
                time.sleep(2)
            health = http.get("/api/v1/health/")
            bots = http.get("/api/v1/bots/?kind=builtin").json()
    finally:
        stop_process_group(process)
        # runserver's reloader child and the worker's pool may outlive their parents.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        log.close()
    output = (tmp_path / "run-dev.log").read_text()

    lines = [line for board in boards.values() for line in board["lines"]]
    assert lines, f"no rated result after 90 s:\n{output[-3000:]}"
    assert all(line["games"] >= 1 for line in lines)
    assert {line["bot"] for line in lines} <= {"random", "greedy", "strong"}
    assert {bot["name"] for bot in bots["results"]} == {"random", "greedy", "strong"}
    assert health.status_code == 200
    assert health.json()["database"] == "ok"
    assert (tmp_path / "var" / "db.sqlite3").exists()
    assert "database is locked" not in output
    assert "Traceback" not in output, output[-3000:]
