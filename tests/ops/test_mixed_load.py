"""Every match finishes under mixed load (issue 39), on both shapes, with real workers.

A short run of ``benchmarks.mixed_load``: the ladder on, two tournaments of the built-in
bots (two owners), a tournament of an HTTP bot that answers at once and one that thinks
1-3 s (5 s a move) with a built-in, a client bot on its account stream in one match
after another, and a person playing a built-in through the API. The embedded default
(``scripts/run-dev``: SQLite, the embedded broker) runs in the SQLite pass; compose's
processes (gunicorn, the worker, the interactive worker, bot-calls, beat) on PostgreSQL
and a private Redis in the real-services pass. Every bot here plays legally and in time:
any aborted or forfeited match is the arena's doing. Before the embedded broker's fix
(b39rec, "Fix: the embedded broker's worker takes its next task ..."), the embedded run
aborted HTTP bots' matches ("gave up after 3 attempts") and forfeited built-ins on time.
"""

from __future__ import annotations

import os

import pytest

from benchmarks.harness import free_port
from benchmarks.mixed_load import mixed_load
from tests.ops.services import PrivateRedis

# About two minutes of load; the matches in play then get up to two more to end.
LOAD = {"minutes": 2.0, "builtin_matches": 12, "http_matches": 6, "persons": 1}


def assert_every_match_finished(report: dict) -> None:
    kinds = report["kinds"]
    assert report["forfeited"] == 0, report["forfeits"]
    assert report["aborted"] == 0, report
    assert report["unfinished"] == 0, report
    assert set(report["tournaments"]) == {"finished"}, report
    assert report["tournament_matches"] == {"finished": 2 * 12 + 6}, report
    for kind in ("tournament", "ladder", "interactive"):
        figures = kinds[kind]
        assert figures["matches"] >= 1, (kind, report)
        assert figures["finished"] == figures["matches"], (kind, report)
        # The waits are reported for every match and every arena turn.
        assert figures["first_move_wait"]["n"] == figures["matches"], (kind, report)
        assert figures["turn_wait"]["n"] > 0, (kind, report)
    assert not report["load_errors"], report["load_errors"]


# pytest-timeout's 300 s is too short for some 4 minutes of processes on a busy machine.
@pytest.mark.timeout(480)
@pytest.mark.skipif(
    os.environ.get("CARDSERVER_REAL_SERVICES") == "1",
    reason="the embedded shape's run is the SQLite pass's; the real-services pass runs the other",
)
def test_every_match_finishes_under_mixed_load_on_the_embedded_default(tmp_path):
    report = mixed_load(shape="embedded", port=free_port(), var_dir=tmp_path, **LOAD)

    print(report)  # the waits, for the CI log
    assert_every_match_finished(report)


@pytest.mark.real_services
@pytest.mark.timeout(480)
def test_every_match_finishes_under_mixed_load_on_the_production_shape(tmp_path):
    redis = PrivateRedis(tmp_path / "redis")
    redis.start()
    try:
        report = mixed_load(
            shape="production", port=free_port(), var_dir=tmp_path / "arena",
            redis_url=redis.url, **LOAD,
        )  # fmt: skip
    finally:
        redis.stop()

    print(report)
    assert_every_match_finished(report)
