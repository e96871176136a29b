"""Figures from data: ``python -m benchmarks record`` keeps a run as JSON, ``python -m
benchmarks report`` writes docs/benchmarks.md from those records, and no other page
quotes a dated figure."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from benchmarks import report, results
from tests.docs.shell_blocks import BASE_DIR, fenced_blocks, pages

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"
# A date, or a commit named as where a figure was measured.
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\bcommit [0-9a-f]{7,}\b")


def _report(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", "report", *arguments],
        cwd=BASE_DIR, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_report_gives_each_record_its_command_commit_date_machine_medians_and_ranges(
    tmp_path,
):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "sequential.md").write_text("From `sprt-raw.json`.\n")
    out = docs / "benchmarks.md"

    done = _report("--results", str(FIXTURES), "--out", str(out), "--docs", str(docs))

    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert "- Command: `python -m benchmarks.engine --seconds 1 --repeats 3`" in page
    assert "- JSON: `tests/docs/fixtures/benchmarks/engine.json`" in page
    assert "- Commit abc1234, 2026-01-02T03:04:05Z" in page
    assert ("- Machine: Python 3.12.3, Linux x86_64, 2 cores, load average 0.5 at the "
            "start, 0.75 at the end") in page  # fmt: skip
    # Median and range from the runs (2400, 1800, 2100), and a single run as it is.
    assert "| durak 2 players, 36 cards | 2,100 | 1,800-2,400 | 3 | deals/s |" in page
    assert "| volynshchik 5 players, 32 cards | 9.50 | 9.50 | 1 | deals/s |" in page
    # A benchmark that kept only its median and range: shown as it gave them.
    assert "| 12,346 | 11,000-13,000 | ? | steps/s |" in page
    assert "- Commit def5678+dirty, 2026-01-03T00:00:00Z" in page
    # A JSON file that is no record is listed with the page that quotes it.
    raw = "`tests/docs/fixtures/benchmarks/sprt-raw.json`"
    assert f"| {raw} | [sequential.md](sequential.md) |" in page
    assert page.index("## engine") < page.index("## kit")


def test_report_refuses_a_record_without_its_commit_naming_the_file(tmp_path):
    record = json.loads((FIXTURES / "engine.json").read_text())
    del record["commit"]
    results = tmp_path / "results"
    results.mkdir()
    (results / "engine.json").write_text(json.dumps(record))

    done = _report("--results", str(results), "--out", str(tmp_path / "out.md"))

    assert done.returncode != 0
    assert "engine.json: no commit" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.md").exists()


def test_record_keeps_the_command_commit_machine_and_every_run_of_a_benchmark(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "record", "engine", "--results", str(tmp_path),
         "--", "--seconds", "0.02", "--repeats", "2"],
        cwd=BASE_DIR, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "engine.json").read_text())
    assert record["command"] == "python -m benchmarks.engine --seconds 0.02 --repeats 2"
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=BASE_DIR,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    assert record["commit"].removesuffix("+dirty") == head
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["date"])
    assert record["machine"]["cores"] >= 1 and "load_start" in record["machine"]
    assert len(record["metrics"]) == len(record["figures"]["rows"]) == 8
    assert all(len(metric["runs"]) == 2 for metric in record["metrics"])


def test_reply_time_record_keeps_every_round_of_each_tree_of_a_comparison():
    def run(p50: float, p95: float, top: float, per_min: float) -> dict:
        return {"reply_time.n": 700, "reply_time.p50": p50, "reply_time.p95": p95,
                "reply_time.max": top, "tournament_matches_per_min": per_min,
                "load_seconds": 120.0}  # fmt: skip

    figures = {"ref": "main", "rounds": 2, "figures": {}, "raw": {
        "base": [run(0.1, 0.9, 1.5, 40.0), run(0.2, 1.2, 2.0, 44.0)],
        "this": [run(0.05, 0.3, 0.6, 38.0), run(0.06, 0.4, 0.7, 41.0)]}}  # fmt: skip

    metrics = {metric["name"]: metric for metric in results.EXTRACTORS["reply_time"](figures)}

    assert metrics["built-ins' reply time to a person, p95, main"]["runs"] == [0.9, 1.2]
    assert metrics["built-ins' reply time to a person, max, this tree"]["runs"] == [0.6, 0.7]
    assert metrics["the tournament meanwhile, this tree"] == {
        "name": "the tournament meanwhile, this tree", "unit": "matches/min",
        "runs": [38.0, 41.0]}  # fmt: skip
    assert metrics["the people's bot turns, main"]["runs"] == [350.0, 350.0]
    assert len(metrics) == 10


def test_the_benchmarks_page_is_the_report_of_the_committed_records():
    assert (BASE_DIR / "docs" / "benchmarks.md").read_text() == report.render(
        report.RESULTS_DIR
    ), "run `python -m benchmarks report` and commit docs/benchmarks.md"


def _prose(page: Path) -> str:
    # Code blocks (a JSON example's deadline, say) are not figures.
    lines = page.read_text().split("\n")
    for block in fenced_blocks(page):
        end = block.line + block.text.count("\n") + 1
        for index in range(block.line - 1, min(end + 1, len(lines))):
            lines[index] = ""
    return "\n".join(lines)


def test_no_page_but_the_benchmarks_page_quotes_a_dated_figure():
    dated = [
        f"{page.relative_to(BASE_DIR)}: {found.group(0)}"
        for page in pages()
        if page.name != "benchmarks.md"
        for found in DATED.finditer(_prose(page))
    ]
    assert dated == [], "quote figures from docs/benchmarks.md (python -m benchmarks report)"


def test_a_labelled_record_runs_its_benchmark_and_is_written_under_its_label(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "record", "engine-short", "--results",
         str(tmp_path), "--", "--seconds", "0.02", "--repeats", "1"],
        cwd=BASE_DIR, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "engine-short.json").read_text())
    assert record["benchmark"] == "engine"
    assert record["command"] == "python -m benchmarks.engine --seconds 0.02 --repeats 1"


def test_a_growth_record_has_each_routes_requests_at_each_size():
    from benchmarks.results import EXTRACTORS

    route = {"times_ms": [3.0, 4.0, 5.0]}
    figures = {"sizes": {"10000": {"routes": {"home": route, "bots": route}},
                         "1000000": {"routes": {"home": route}}}}  # fmt: skip

    metrics = EXTRACTORS["growth"](figures)

    assert [m["name"] for m in metrics] == [
        "home at 10,000 matches", "home at 1,000,000 matches", "bots at 10,000 matches",
    ]
    assert metrics[0]["runs"] == [3.0, 4.0, 5.0] and metrics[0]["unit"] == "ms"


def test_a_bot_calls_record_keeps_each_trees_rounds_of_a_run_against_a_baseline():
    from benchmarks import results

    rounds = [{"runs.200.turns_per_s": value, "runs.200.cpu_ms_per_turn.total": 3.0,
               "runs.200.matches": 200} for value in (150.0, 170.0)]  # fmt: skip
    figures = {"ref": "abc1234", "raw": {"base": rounds, "this": rounds[:1]}}

    metrics = {m["name"]: m["runs"] for m in results.EXTRACTORS["bot_calls"](figures)}

    assert metrics == {
        "abc1234: 200 matches, turns per s": [150.0, 170.0],
        "abc1234: 200 matches, CPU a turn, total": [3.0, 3.0],
        "this tree: 200 matches, turns per s": [150.0],
        "this tree: 200 matches, CPU a turn, total": [3.0],
    }


def test_a_live_record_keeps_each_n_s_rounds_with_their_ratio_to_the_same_round_s_n_0():
    from benchmarks.results import EXTRACTORS

    def row(n: int, round_: int, moves: float) -> dict:
        return {"streams": n, "round": round_, "opened": n, "moves_per_s": moves,
                "get_p99_ms": 30.0, "server_cpu_ms_per_move": 5.0, "rss_mb": 300.0}  # fmt: skip

    held = [row(0, 0, 200.0), row(100, 0, 180.0), row(0, 1, 100.0), row(100, 1, 95.0)]
    figures = {"held": held, "wake": {"streams": 1000, "events": 40, "p50_ms": 4.0, "p99_ms": 9.0}}

    metrics = {m["name"]: m["runs"] for m in EXTRACTORS["live"](figures)}

    assert metrics["moves at 100 streams"] == [180.0, 95.0]
    assert metrics["moves at 100 streams / at 0, same round"] == [0.9, 0.95]
    assert metrics["streams held of 100"] == [100.0, 100.0]
    assert metrics["wake-up p99, 1,000 streams"] == [9.0]
