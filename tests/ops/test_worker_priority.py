"""Interactive play before batch work for the CPU too: scripts/run-dev and docker/compose.yaml
start the batch worker at a lower priority and the interactive worker as wide, alike."""

from __future__ import annotations

import re
import shlex

from benchmarks.compose import COMPOSE, compose_shell, substitute
from tests.processes import BASE_DIR


def _run_dev_workers() -> dict[str, list[str]]:
    """run-dev's Celery workers' command lines, by the queue they read ("" for the default)."""
    script = (BASE_DIR / "scripts" / "run-dev").read_text().replace("\\\n", " ")
    workers = {}
    for line in script.splitlines():
        if "-m celery -A cardserver worker" not in line:
            continue
        words = shlex.split(line.rstrip("& \n"))
        queue = words[words.index("-Q") + 1] if "-Q" in words else ""
        workers[re.sub(r"\$\{\w+:-(.*)\}", r"\1", queue)] = words
    return workers


def _prefix(words: list[str]) -> list[str]:
    """What runs the worker: the words before its program (``python -m celery``, ``celery``)."""
    start = words.index("-m") - 1 if "-m" in words else words.index("celery")
    return words[:start]


def test_batch_worker_runs_at_nice_10_in_run_dev_and_compose_alike():
    run_dev = _run_dev_workers()[""]
    compose = COMPOSE["services"]["worker"]["command"]

    assert _prefix(run_dev) == ["nice", "-n", "10"]
    assert _prefix(compose) == ["nice", "-n", "10"]


def test_interactive_worker_runs_at_normal_priority_in_run_dev_and_compose_alike():
    run_dev = _run_dev_workers()["interactive"]
    compose = shlex.split(compose_shell(COMPOSE["services"]["interactive"]["command"])[2])

    assert _prefix(run_dev) == []
    assert _prefix(compose) == ["exec"]


def test_interactive_worker_has_as_many_pool_processes_in_run_dev_as_in_compose():
    run_dev = _run_dev_workers()["interactive"]
    compose = shlex.split(compose_shell(COMPOSE["services"]["interactive"]["command"])[2])

    def processes(words: list[str]) -> str:
        option = next(word for word in words if word.startswith("--concurrency="))
        return substitute(option.removeprefix("--concurrency="), {})

    assert processes(run_dev) == processes(compose) == "2"
