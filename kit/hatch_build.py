"""Put the kit's modules in its sdist and wheel from where the server keeps them.

In a checkout the sources are beside this folder (``../games/engine`` ...); an sdist
carries them under ``src/`` (so that a wheel built from the sdist, as ``python -m build``
does, finds them there). Either way the repository keeps one copy of every module.
"""

from __future__ import annotations

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# The modules of the kit: the engine, the fairness proofs, the protocol and its caller,
# the built-in players and bots.kit itself. Nothing here imports Django.
SOURCES = (
    "games/__init__.py",
    "games/engine",
    "games/fairness.py",
    "bots/__init__.py",
    "bots/protocol.py",
    "bots/caller.py",
    "bots/connections.py",
    "bots/urlsafety.py",
    "bots/builtin",
    "bots/kit",
)


class KitSources(BuildHookInterface):
    PLUGIN_NAME = "kit-sources"

    def initialize(self, version: str, build_data: dict) -> None:
        here = Path(self.root)
        checkout = here.parent
        base = checkout if (checkout / "games" / "engine").is_dir() else here / "src"
        prefix = "src/" if self.target_name == "sdist" else ""
        for source in SOURCES:
            path = base / source
            if not path.exists():
                raise FileNotFoundError(f"the kit needs {source}, missing from {base}")
            build_data["force_include"][str(path)] = prefix + source
