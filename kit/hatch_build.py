"""Build the kit's sdist and wheel from the package ``cardkit`` beside this folder.

The kit is the whole package (``../cardkit`` in a checkout), which the server imports too:
one copy of every module, and no list of modules that could miss one. An sdist carries the
package under ``src/``, so that a wheel built from the sdist (as ``python -m build`` does)
finds it there. The version is ``cardkit.__version__``, read from the package's source.
"""

from __future__ import annotations

import re
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.metadata.plugin.interface import MetadataHookInterface

PACKAGE = "cardkit"


def package_folder(root: str) -> Path:
    """Return the folder of the package: beside the kit's folder, or in an sdist's src/."""
    here = Path(root)
    for folder in (here.parent / PACKAGE, here / "src" / PACKAGE):
        if (folder / "__init__.py").is_file():
            return folder
    raise FileNotFoundError(f"the kit is the package {PACKAGE}: not beside {here}, nor in src/")


class KitSources(BuildHookInterface):
    PLUGIN_NAME = "kit-sources"

    def initialize(self, version: str, build_data: dict) -> None:
        prefix = "src/" if self.target_name == "sdist" else ""
        build_data["force_include"][str(package_folder(self.root))] = prefix + PACKAGE


class KitVersion(MetadataHookInterface):
    PLUGIN_NAME = "kit-version"

    def update(self, metadata: dict) -> None:
        source = (package_folder(self.root) / "__init__.py").read_text(encoding="utf-8")
        found = re.search(r'^__version__ = "([^"]+)"$', source, re.MULTILINE)
        if found is None:
            raise ValueError(f"{PACKAGE}/__init__.py has no line __version__ = \"...\"")
        metadata["version"] = found.group(1)
