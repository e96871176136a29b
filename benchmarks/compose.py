"""docker/compose.yaml and docker/Dockerfile read as compose would run them, for running
the production shape's processes directly (no Docker engine here): the ops tests and the
production soak (``benchmarks.soak_production``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

BASE_DIR = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((BASE_DIR / "docker" / "compose.yaml").read_text())
DOCKERFILE = (BASE_DIR / "docker" / "Dockerfile").read_text()


def substitute(value: str, variables: dict[str, str]) -> str:
    """Expand compose's ${NAME}, ${NAME:-default} and ${NAME:?error} with ``variables``."""

    def one(found: re.Match) -> str:
        name, operator, default = found.group(1), found.group(2), found.group(3) or ""
        if name in variables and variables[name] != "":
            return variables[name]
        if operator == ":?":
            raise KeyError(f"compose needs {name}: {default}")
        return default if operator == ":-" else ""

    return re.sub(r"\$\{(\w+)(:-|:\?)?([^}]*)\}", one, value)


def service_environment(variables: dict[str, str]) -> dict[str, str]:
    """The environment compose gives the app's services (they share one), with
    ``variables`` as the shell's."""
    environment = COMPOSE["services"]["web"]["environment"]
    return {name: substitute(str(value), variables) for name, value in environment.items()}


def image_command() -> list[str]:
    """The image's CMD: the web server."""
    found = re.search(r"^CMD (\[.*?\])\s*$", DOCKERFILE, re.MULTILINE | re.DOTALL)
    return json.loads(found.group(1).replace("\\\n", ""))


def compose_shell(command: list[str]) -> list[str]:
    """Return a service's ``sh -c`` command as compose runs it: ``$$`` is a literal ``$``,
    expanded by the shell in the container from its environment."""
    assert command[:2] == ["sh", "-c"]
    return ["sh", "-c", command[2].replace("$$", "$")]
