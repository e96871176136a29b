"""The benchmarks' harness (``benchmarks.harness``, ``benchmarks.machine``): what every
benchmark starts, waits for, samples and writes goes through these helpers."""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import sys
import threading

import pytest

from benchmarks import harness, machine


def test_rounds_take_turns_every_contender_once_a_round():
    assert list(harness.rounds(3, ("base", "this"))) == [
        (0, "base"), (0, "this"), (1, "base"), (1, "this"), (2, "base"), (2, "this"),
    ]  # fmt: skip


def test_write_json_writes_the_figures_and_nothing_without_a_path(tmp_path):
    path = tmp_path / "figures.json"

    harness.write_json(path, {"runs": [1.5, 2]})
    harness.write_json(None, {"runs": [3]})

    assert json.loads(path.read_text()) == {"runs": [1.5, 2]}
    assert list(tmp_path.iterdir()) == [path]


def test_log_tail_keeps_the_last_lines_and_a_missing_log_reads_empty(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("".join(f"line {n}\n" for n in range(50)))

    assert harness.log_tail(log, lines=2) == "line 48\nline 49"
    assert harness.log_lines(tmp_path / "missing.log") == []


def test_accepts_says_whether_something_listens_on_the_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        assert harness.accepts(port)
    assert not harness.accepts(port)


class _Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(int(self.path.strip("/")))
        self.end_headers()

    def log_message(self, *args):
        pass


def test_answers_wants_a_200_unless_any_status_will_do():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert harness.answers(f"{url}/200")
        assert not harness.answers(f"{url}/503")
        assert harness.answers(f"{url}/503", status=None)
    finally:
        server.shutdown()
        server.server_close()
    assert not harness.answers(f"{url}/200", status=None, timeout=1)


def test_start_without_inherit_passes_only_the_environment_given(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://from-the-calling-shell/db")
    log = tmp_path / "env.log"
    script = "import json, os; print(json.dumps(dict(os.environ)))"

    process = harness.start([sys.executable, "-c", script], env={"ONLY": "1"}, log=log,
                            inherit=False)  # fmt: skip
    process.wait(timeout=30)

    seen = json.loads(log.read_text())
    assert seen["ONLY"] == "1"
    assert "DATABASE_URL" not in seen


def test_start_writes_standard_error_apart_when_given_its_own_log(tmp_path):
    out, errors = tmp_path / "out.log", tmp_path / "err.log"
    script = "import sys; print('said'); print('failed', file=sys.stderr)"

    harness.start([sys.executable, "-c", script], env={}, log=out, errors=errors).wait(30)

    assert out.read_text() == "said\n"
    assert errors.read_text() == "failed\n"


def test_session_processes_shows_each_process_of_a_started_group_with_its_memory():
    process = harness.start(["bash", "-c", "sleep 300 & sleep 300 & wait"], env={})
    try:
        harness.wait_until(lambda: len(machine.session_processes({process.pid})) == 3,
                           timeout=10, what="bash and its two sleeps")  # fmt: skip
        found = machine.session_processes({process.pid})
    finally:
        harness.stop_process_group(process, timeout=10)

    assert {p.session for p in found} == {process.pid}
    assert sorted(p.command.split()[0] for p in found) == ["bash", "sleep", "sleep"]
    assert all(p.rss_mib > 0 for p in found)
    assert {p.parent for p in found if p.pid != process.pid} == {process.pid}


@pytest.mark.parametrize("ended", [False, True])
def test_stop_process_groups_stops_every_group_given_and_passes_over_none(ended):
    scripts = [
        harness.start(["bash", "-c", "sleep 300 & " + ("exit 0" if ended else "wait")],
                      env={})
        for _ in range(2)
    ]  # fmt: skip
    harness.wait_until(lambda: all(len(machine.session_processes({s.pid})) >= 1 for s in scripts),
                       timeout=10, what="the scripts")  # fmt: skip

    harness.stop_process_groups([*scripts, None], timeout=10)

    assert machine.session_processes({s.pid for s in scripts}) == []


def test_processes_cpu_finds_a_port_or_a_name_only_as_a_whole_word():
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    longer = subprocess.Popen([*sleeper, "127.0.0.1:86500", "bench_db2"])
    exact = subprocess.Popen([*sleeper, "--bind=127.0.0.1:8650", "dbname=bench_db"])
    try:
        harness.wait_until(
            lambda: all("sleep" in (machine.command_line(p.pid) or "") for p in (longer, exact)),
            timeout=10, what="the sleepers' command lines",
        )  # fmt: skip
        assert set(machine.processes_cpu("127.0.0.1:8650")) == {exact.pid}
        assert set(machine.processes_cpu("bench_db")) == {exact.pid}
        assert set(machine.processes_cpu("127.0.0.1:86500")) == {longer.pid}
    finally:
        for process in (longer, exact):
            process.kill()
            process.wait()
