"""Every name a benchmark imports from another module of ``benchmarks`` exists there,
imports inside functions included (they fail only when the benchmark runs, which tests
rarely do: ``benchmarks.turn_record`` imported a helper that ``bot_calls`` no longer had)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import benchmarks

FOLDER = Path(benchmarks.__file__).parent


def _imports_from_benchmarks() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(FOLDER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks"):
                found += [(path.name, node.module, alias.name) for alias in node.names]
    return found


def test_each_name_imported_from_a_benchmark_module_exists():
    missing = []
    for importer, module, name in _imports_from_benchmarks():
        imported = importlib.import_module(module)
        if not hasattr(imported, name) and importlib.util.find_spec(f"{module}.{name}") is None:
            missing.append(f"{importer}: from {module} import {name}")

    assert not missing
