"""The kit's distribution (kit/pyproject.toml) is the package cardkit and what it imports."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cardkit"
# Modules whose imports the [rl] extra brings; the rest of cardkit has the base dependencies.
RL = PACKAGE / "rl"


def third_party_imports(paths: list[Path]) -> set[str]:
    """Return the top-level names of the packages outside the standard library and cardkit
    that the modules at ``paths`` import (an import guarded by ``except ImportError``
    counts: the distribution still declares it)."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {name for name in names if name not in sys.stdlib_module_names and name != "cardkit"}


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.match(r"[A-Za-z0-9_.-]+", line).group(0).lower() for line in requirements}


def test_the_kits_dependencies_are_exactly_what_cardkit_imports():
    project = tomllib.loads((ROOT / "kit" / "pyproject.toml").read_text())["project"]
    modules = sorted(PACKAGE.rglob("*.py"))
    base = third_party_imports([path for path in modules if RL not in path.parents])
    rl = third_party_imports([path for path in modules if RL in path.parents])

    assert requirement_names(project["dependencies"]) == base
    assert requirement_names(project["optional-dependencies"]["rl"]) == rl - base


def test_the_version_has_one_source_the_package():
    import cardkit

    project = tomllib.loads((ROOT / "kit" / "pyproject.toml").read_text())["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", cardkit.__version__)
