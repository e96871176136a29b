from tests.bots.conftest import http_bot  # noqa: F401 - the fixture, for the shape tests
