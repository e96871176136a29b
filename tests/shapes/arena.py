"""The arena's two shapes as separate processes, for tests that hold both to the same
assertions: ``embedded`` (make run's: SQLite and the embedded file broker in a folder of
the test's own) and ``production`` (PostgreSQL, the test database, and Redis, on a queue
of the test's own). Each starts its workers as ``scripts/run-dev`` and compose do: a
prefork worker of two processes, the interactive worker beside it (the bots' turns in
matches a person or a challenger waits on) and the ``bot-calls`` worker (threads, the
I/O pool),
and runs the test's steps in a Python process of its own (``Arena.run``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmarks.harness import cpu_queues, stop_process_group
from tests.processes import BASE_DIR, clean_environment, worker_database_url

SHAPES = ("embedded", "production")
# The shapes as a fixture's params: the production one on the test database (PostgreSQL,
# its rows committed for the workers to see), skipped on SQLite.
SHAPE_PARAMS = [
    pytest.param("embedded"),
    pytest.param(
        "production", marks=[pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
    ),
]


@dataclass
class Arena:
    shape: str
    environment: dict[str, str]
    folder: Path
    # Every worker started, restarts included: stop() ends each (a dict by name lost the
    # interactive worker of each earlier "cpu" start, which then ran on after the test).
    workers: list[subprocess.Popen] = field(default_factory=list)

    def run(self, code: str, timeout: float = 300) -> dict:
        """Run ``code`` (Django set up) in a new process of this shape; return the JSON
        object it prints on its last line."""
        done = subprocess.run(
            [sys.executable, "-c", f"import django\ndjango.setup()\n{code}"],
            cwd=BASE_DIR, env=self.environment, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:] + self.logs()
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(self, name: str) -> subprocess.Popen:
        """Start the ``cpu`` worker (prefork, two processes, with the ``interactive`` worker
        beside it) or the ``calls`` worker (the I/O pool) as make run does; its output goes
        to ``<folder>/<name>.log``."""
        default = self.environment.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
        if name == "cpu":
            self.start("interactive")
            options = ["--concurrency=2", "-Q", default]
        elif name == "interactive":
            queue = cpu_queues(default).split(",")[1]
            options = ["--concurrency=1", "-Q", queue, "-n", "interactive@%h"]
        else:
            queue = self.environment.get("BOTS_CALL_QUEUE") or _call_queue(self.environment)
            options = ["--pool=threads", "--concurrency=4", "-Q", queue, "-n", "bot-calls@%h"]
        log = (self.folder / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--loglevel=INFO",
             "--without-mingle", "--without-gossip", *options],
            cwd=BASE_DIR, env=self.environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.workers.append(process)
        return process

    def stop(self) -> None:
        for process in self.workers:
            stop_process_group(process)

    def logs(self) -> str:
        return "".join(
            f"\n--- {path.name}:\n{path.read_text()[-3000:]}" for path in self.folder.glob("*.log")
        )


def _call_queue(environment: dict[str, str]) -> str:
    queue = environment.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
    return "bot-calls" if queue == "celery" else f"{queue}-bot-calls"


def arena_of(shape: str, folder: Path, **variables: str) -> Arena:
    """The arena of ``shape`` in ``folder``, migrated, no worker started yet. The
    production shape uses the test database: the test must hold ``transactional_db``."""
    folder.mkdir(parents=True, exist_ok=True)
    if shape == "embedded":
        environment = clean_environment(folder / "var", LOG_LEVEL="INFO", **variables)
    else:
        queue = f"test-shapes-{uuid.uuid4().hex}"
        environment = clean_environment(
            folder / "var",
            DATABASE_URL=worker_database_url(),
            CELERY_BROKER_URL=os.environ["CELERY_BROKER_URL"],
            CELERY_TASK_DEFAULT_QUEUE=queue,
            LOG_LEVEL="INFO",
            **variables,
        )
        environment.pop("BOTS_CALL_QUEUE", None)
    environment["DJANGO_SETTINGS_MODULE"] = "cardserver.settings"
    arena = Arena(shape=shape, environment=environment, folder=folder)
    if shape == "embedded":
        migrated = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert migrated.returncode == 0, migrated.stderr
    return arena
