"""Modules of one sub-domain: none of the project's is over 450 lines (tests and
migrations aside), so a module that grows past it is split when it does, not later."""

from pathlib import Path

from tests.test_import_graph import PACKAGES

MOST_LINES = 450
ROOT = Path(__file__).resolve().parent.parent


def test_no_module_of_the_project_is_over_450_lines():
    over = {
        str(path.relative_to(ROOT)): lines
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not over, f"split these modules (lines): {over}"
