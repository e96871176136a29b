"""What README.md and docs/running.md say `make run`, `make test` and `make bench` do is
what the Makefile does (``make -n``: the commands printed, none run)."""

import subprocess

from tests.docs.shell_blocks import BASE_DIR


def _planned(target: str) -> str:
    done = subprocess.run(["make", "-n", target], cwd=BASE_DIR, capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    return done.stdout


def test_make_test_runs_ruff_the_import_contracts_the_strict_docs_build_and_the_tests():
    planned = _planned("test")
    for command in ("ruff check .", "lint-imports", "mkdocs build --strict", "pytest -q"):
        assert command in planned


def test_make_run_runs_scripts_run_dev_which_starts_uvicorn_three_workers_and_beat():
    assert "scripts/run-dev" in _planned("run")
    script = (BASE_DIR / "scripts" / "run-dev").read_text()
    assert "uvicorn cardserver.asgi:application" in script
    assert script.count("celery -A cardserver worker") == 3
    assert "celery -A cardserver beat" in script


def test_make_bench_runs_every_benchmark_into_artefacts():
    assert "-m benchmarks" in _planned("bench")
    assert 'BASE_DIR / "artefacts" / "benchmarks.md"' in (
        BASE_DIR / "benchmarks" / "__main__.py"
    ).read_text()
