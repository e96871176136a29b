"""The edge tests' parts (benchmarks/edge.py) and the rule that nginx must be there in CI."""

from __future__ import annotations

import os

import pytest

from benchmarks.edge import nginx_path

INSTALL_HINT = "the proxy tests need Debian's nginx: `apt-get install -y nginx` (`.ci/run` does)"


def require_nginx() -> str:
    """Return the path of nginx; skip the test without it, or fail it where the proxy tests
    must run (``CARDSERVER_REQUIRE_NGINX=1``, set by ``.ci/run``)."""
    found = nginx_path()
    if found:
        return found
    if os.environ.get("CARDSERVER_REQUIRE_NGINX") == "1":
        pytest.fail(f"nginx is missing: {INSTALL_HINT}")
    pytest.skip(f"nginx is missing: {INSTALL_HINT}")
