"""The statistics benchmarks refuse arguments that would give no figures, in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argument", ["--runs", "--max-games", "--processes", "--decks"])
def test_ladder_power_refuses_zero_with_one_line_naming_the_option(argument):
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.ladder_power", argument, "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert argument in last and "0 is too few: give 1 or more" in last
