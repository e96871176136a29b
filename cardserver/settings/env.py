"""Readers of environment variables shared by the settings modules.

Not composed into ``cardserver.settings`` itself: a settings module imports what it
needs from here by name.
"""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_bool(name: str, default: bool) -> bool:
    """Return the boolean in environment variable ``name``, or ``default`` if unset or empty."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={os.environ[name]!r} is not a boolean; use one of "
        f"{', '.join(sorted(_TRUE | _FALSE))}."
    )


def env_list(name: str, default: list[str]) -> list[str]:
    """Return the comma-separated list in ``name``, or ``default`` if unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]
