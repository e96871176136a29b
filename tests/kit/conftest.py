"""The kit's tests use the HTTP bots of the bots' tests (real servers on 127.0.0.1)."""

from tests.bots.conftest import http_bot, kit_http_bot  # noqa: F401
