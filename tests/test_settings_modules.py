"""The settings package: one module per concern, each setting defined in one of them."""

import ast
from collections import defaultdict
from pathlib import Path

import cardserver.settings

SETTINGS_DIR = Path(cardserver.settings.__file__).parent


def assigned_names(tree: ast.Module) -> set[str]:
    """Return the upper-case names a module assigns at its top level (in ifs and loops too)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id.isupper():
                    names.add(name.id)
    return names


def test_each_setting_is_defined_in_one_settings_module_only():
    # The package's __init__ composes the modules by star imports, where a second
    # definition of a name would silently replace the first.
    modules = defaultdict(list)
    for path in sorted(SETTINGS_DIR.glob("*.py")):
        for name in assigned_names(ast.parse(path.read_text())):
            modules[name].append(path.name)

    assert {name: where for name, where in modules.items() if len(where) > 1} == {}


def test_settings_package_composes_every_settings_module():
    init = ast.parse((SETTINGS_DIR / "__init__.py").read_text())
    composed = {
        node.module.rpartition(".")[2]
        for node in init.body
        if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"]
    }

    # env.py holds the readers of the environment, no settings.
    assert composed == {p.stem for p in SETTINGS_DIR.glob("*.py")} - {"__init__", "env"}
