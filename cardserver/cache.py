"""Django's database cache with an ``incr()`` that several processes may call at once.

The rate-limit counters (cardserver/throttling.py) live here when there is no Redis.
Django's ``incr()`` reads the value and writes it back, so two processes counting at
once could both write the same count and one request would go uncounted. Here the read
and the write are one transaction that holds a lock: the database's write lock on
SQLite (transactions begin IMMEDIATE, cardserver/settings/base.py), a transaction-scoped
advisory lock on the key on PostgreSQL.
"""

from __future__ import annotations

from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.db import connections, router, transaction


class DatabaseCache(DjangoDatabaseCache):
    def incr(self, key, delta: int = 1, version=None) -> int:
        db = router.db_for_write(self.cache_model_class)
        with transaction.atomic(using=db):
            connection = connections[db]
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_xact_lock(hashtext(%s))",
                        [self.make_and_validate_key(key, version=version)],
                    )
            return super().incr(key, delta, version)
