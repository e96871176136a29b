"""The embedded arena runs for days: its broker never hands out a torn message, a broken
message never ends a worker, and beat neither outlives its worker nor runs twice."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kombu import Connection

from benchmarks.harness import free_port, stop_process_group, wait_until
from tests.processes import BASE_DIR, clean_environment, load_settings

PYTHON = str(BASE_DIR / ".venv" / "bin" / "python")


def embedded_connection(folder: Path) -> Connection:
    """A connection to an embedded broker in ``folder``, through the transport that the
    default settings (no broker URL) pick."""
    settings = load_settings(folder / "var")
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "control_folder": str(folder / "control"),
    }
    transport = settings.get("CELERY_BROKER_TRANSPORT") or "filesystem"
    return Connection("filesystem://", transport=transport, transport_options=options)


def test_embedded_broker_message_appears_only_once_written_whole(tmp_path, monkeypatch):
    seen_while_writing: list[list[str]] = []
    with embedded_connection(tmp_path) as connection:
        channel = connection.default_channel
        module = sys.modules[type(channel).__module__]
        real_dumps = module.dumps

        def dumps_and_look(payload):
            # What a consumer listing the folder would find while this message is written.
            seen_while_writing.append(sorted(p.name for p in tmp_path.glob("*.msg")))
            return real_dumps(payload)

        monkeypatch.setattr(module, "dumps", dumps_and_look)
        queue = connection.SimpleQueue("torn")
        queue.put({"n": 1})
        message = queue.get(timeout=2)
        message.ack()
        queue.close()

    assert message.payload == {"n": 1}
    assert seen_while_writing == [[]]  # one message written, none visible meanwhile


BROKEN_MESSAGES = {
    "empty": b"",
    "half-written": b'{"body": "eyJ0YXNrIjo',
    "not-json": b"\x00\xffnot json",
    "list": b"[]",
    "no-properties": b'{"body": "e30="}',
    "bad-body": b'{"body": "abc", "properties": {"delivery_tag": "x", "body_encoding": "base64",'
    b' "delivery_info": {"exchange": "", "routing_key": "celery"}}, "content-type":'
    b' "application/json", "content-encoding": "utf-8", "headers": {}}',
}


SEND_SWEEP = (
    "from cardserver.celery import app; app.send_task('games.tasks.sweep_overdue_matches')"
)


@pytest.mark.real_services
def test_worker_drops_broken_messages_of_the_embedded_broker_and_goes_on(tmp_path):
    var_dir = tmp_path / "var"
    environment = clean_environment(var_dir)
    migrate(environment)
    queue_dir = var_dir / "celery" / "queue"
    # Named to sort before any message the worker or this test sends.
    for index, (name, raw) in enumerate(BROKEN_MESSAGES.items()):
        (queue_dir / f"{index:02d}_{name}.celery.msg").write_bytes(raw)
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log:
        worker = subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "cardserver", "worker", "--pool=solo",
             "--loglevel=INFO", "--without-mingle", "--without-gossip"],
            cwd=BASE_DIR, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        sent = subprocess.run(
            [PYTHON, "-c", SEND_SWEEP],
            cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        wait_until(
            lambda: "sweep_overdue_matches" in log_path.read_text()
            and "succeeded" in log_path.read_text()
            or worker.poll() is not None,
            timeout=60,
            what="the worker to run the task sent after the broken messages",
        )
        alive = worker.poll() is None
    finally:
        stop_process_group(worker)
    output = log_path.read_text()

    assert alive, output[-3000:]
    assert "Unrecoverable error" not in output
    assert output.count("dropped unreadable message") == len(BROKEN_MESSAGES), output[-3000:]
    assert not list(queue_dir.glob("*.msg"))


def start_beat(environment: dict, log_path: Path) -> subprocess.Popen:
    with log_path.open("w") as log:
        return subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "cardserver", "beat", "--loglevel=INFO"],
            cwd=BASE_DIR, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def migrate(environment: dict) -> None:
    done = subprocess.run(
        [PYTHON, "manage.py", "migrate", "--noinput"],
        cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.real_services
def test_second_beat_of_one_sqlite_database_exits_at_once(tmp_path):
    environment = clean_environment(tmp_path / "var")
    migrate(environment)
    _second_beat_exits(environment, tmp_path)


@pytest.mark.postgres
@pytest.mark.real_services
@pytest.mark.django_db(transaction=True)
def test_second_beat_of_one_postgresql_database_exits_at_once(tmp_path):
    from tests.processes import worker_database_url

    environment = clean_environment(tmp_path / "var", DATABASE_URL=worker_database_url())
    _second_beat_exits(environment, tmp_path)


def _second_beat_exits(environment: dict, tmp_path: Path) -> None:
    first_log, second_log = tmp_path / "beat-1.log", tmp_path / "beat-2.log"
    first = start_beat(environment, first_log)
    second = None
    try:
        wait_until(
            lambda: "holds the beat lock" in first_log.read_text() or first.poll() is not None,
            timeout=60,
            what="the first beat to take the lock",
        )
        second = start_beat(environment, second_log)
        second_status = second.wait(timeout=60)
        first_alive = first.poll() is None
    finally:
        stop_process_group(first)
        if second is not None:
            stop_process_group(second)

    assert first_alive, first_log.read_text()[-3000:]
    assert second_status == 1
    assert "another beat is running" in second_log.read_text()


@pytest.mark.real_services
def test_beat_stops_sending_when_the_worker_of_make_run_is_killed(tmp_path):
    environment = clean_environment(
        tmp_path / "var", RUN_ADDRESS=f"127.0.0.1:{free_port()}", RUN_LADDER="0"
    )
    environment["PATH"] = f"{BASE_DIR / '.venv' / 'bin'}:{environment['PATH']}"
    migrate(environment)
    # The ladder ticks every second, so a beat that is still there is seen at once.
    subprocess.run(
        [PYTHON, "manage.py", "ladder", "on", "--every", "1"],
        cwd=BASE_DIR, env=environment, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    log_path = tmp_path / "run-dev.log"
    with log_path.open("w") as log:
        run_dev = subprocess.Popen(
            [str(BASE_DIR / "scripts" / "run-dev")],
            cwd=BASE_DIR, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def sends() -> int:
        return log_path.read_text().count("Sending due task")

    try:
        wait_until(lambda: sends() >= 2, timeout=90, what="beat to send the ladder tick")
        worker = _worker_main_pid(run_dev.pid)
        os.kill(worker, signal.SIGKILL)
        run_dev.wait(timeout=60)
        time.sleep(1)  # a last send in flight when the worker died
        after_exit = sends()
        time.sleep(5)  # five ladder ticks, were a beat still running
        later = sends()
    finally:
        stop_process_group(run_dev)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run_dev.pid, signal.SIGKILL)

    assert later == after_exit, log_path.read_text()[-3000:]


def _worker_main_pid(parent: int) -> int:
    """Return the pid of the Celery worker that ``parent`` (run-dev) started."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and "celery" in command and " worker" in command:
            return int(entry.name)
    raise AssertionError(f"no Celery worker under process {parent}")


SEND_QUICK_TASKS = (
    "from cardserver.celery import app\n"
    "for number in range(20): app.send_task('celery.accumulate', args=(number,))"
)


@pytest.mark.real_services
def test_embedded_worker_takes_the_next_task_once_one_ends_not_every_two_seconds(tmp_path):
    # A prefork worker of two processes, as make run's: its prefetch is two messages, and
    # before the fix it took two every 2 s (the acknowledgements of the tasks done waited
    # for Celery's loop to come round), so twenty quick tasks took about 20 s.
    environment = clean_environment(tmp_path / "var")
    migrate(environment)
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log:
        worker = subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "cardserver", "worker", "--concurrency=2",
             "--loglevel=INFO", "--without-mingle", "--without-gossip"],
            cwd=BASE_DIR, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(lambda: "ready." in log_path.read_text(), timeout=60, what="the worker")
        started = time.monotonic()
        sent = subprocess.run(
            [PYTHON, "-c", SEND_QUICK_TASKS],
            cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        wait_until(
            lambda: log_path.read_text().count("succeeded") >= 20,
            timeout=60,
            what="the worker to run twenty tasks",
        )
        elapsed = time.monotonic() - started
    finally:
        stop_process_group(worker)

    # The send itself (a new interpreter loading Django) is most of this.
    assert elapsed < 8, f"twenty quick tasks took {elapsed:.1f} s"


TAKE_AND_DIE = """
import os, sys
from kombu import Connection
folder = sys.argv[1]
options = {"data_folder_in": folder, "data_folder_out": folder,
           "control_folder": folder + "/control"}
with Connection("filesystem://", transport="cardserver.broker:Transport",
                transport_options=options) as connection:
    queue = connection.SimpleQueue("work")
    queue.get(timeout=5).ack()
    print(queue.get(timeout=5).payload["n"], flush=True)
    os._exit(0)  # dies holding the second message, unacknowledged
"""


def test_message_whose_consumer_died_unacknowledged_is_delivered_again_and_no_other(tmp_path):
    # Celery's acks_late on the embedded broker: a task whose worker died before it was
    # acknowledged runs again, as a broker server redelivers it; one acknowledged does not.
    with embedded_connection(tmp_path) as connection:
        queue = connection.SimpleQueue("work")
        queue.put({"n": 1})
        time.sleep(0.01)  # messages are ordered by the millisecond they were sent
        queue.put({"n": 2})
        died = subprocess.run(
            [PYTHON, "-c", TAKE_AND_DIE, str(tmp_path)],
            cwd=BASE_DIR, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert died.stdout.strip() == "2", died.stderr
        again = queue.get(timeout=10)
        again.ack()
        with pytest.raises(queue.Empty):
            queue.get(timeout=3)
        queue.close()

    assert again.payload == {"n": 2}
    assert not [p.name for p in tmp_path.iterdir() if p.is_file()]  # acknowledged: gone
