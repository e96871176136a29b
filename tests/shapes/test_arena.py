"""The shapes' harness ends every process it started."""

from __future__ import annotations

from tests.processes import clean_environment
from tests.shapes.arena import Arena


def test_stop_ends_every_worker_started_restarts_and_their_interactive_workers_included(
    tmp_path,
):
    environment = clean_environment(tmp_path / "var")
    environment["DJANGO_SETTINGS_MODULE"] = "cardserver.settings"
    arena = Arena(shape="embedded", environment=environment, folder=tmp_path)
    # A test that restarts the CPU worker: each start brings an interactive worker too.
    arena.start("cpu").kill()
    arena.start("cpu")

    arena.stop()

    assert len(arena.workers) == 4
    assert [process.poll() is not None for process in arena.workers] == [True] * 4
