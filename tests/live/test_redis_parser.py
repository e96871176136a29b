"""redis-py parses with hiredis (a dependency of the project, not only of production).

Reading a move's pub/sub message cost the hub's event loop 15.3-15.6 µs of CPU with
redis-py's own parser and 2.2-2.4 µs with hiredis's (docs/matches-api.md); redis-py takes
hiredis when it is installed and recent enough (3.2 or later), silently falling back
otherwise. Connections made as the hub and the publisher make theirs must have it.
"""

from __future__ import annotations

import redis
from redis._parsers import _AsyncHiredisParser, _HiredisParser
from redis.asyncio.connection import ConnectionPool

URL = "redis://127.0.0.1:6379/0"  # no connection is opened


def test_the_hub_s_redis_connection_parses_with_hiredis():
    connection = ConnectionPool.from_url(URL, client_name="test").make_connection()
    assert isinstance(connection._parser, _AsyncHiredisParser)


def test_the_publisher_s_redis_client_parses_with_hiredis():
    connection = redis.Redis.from_url(URL).connection_pool.make_connection()
    assert isinstance(connection._parser, _HiredisParser)
