"""Celery beat that refuses to run beside another beat of the same arena.

Two beats send every periodic task twice (two ladder ticks, two deadline sweeps). A beat
left running by a worker that was killed, or started twice by hand, would do that; so
beat takes a lock on starting and exits (status 1, saying why) when another beat holds
it. The lock is the database's, so it covers every beat that shares the arena's data:

- PostgreSQL: a session advisory lock on a connection of beat's own, held while beat
  runs and released by the server when beat's process or connection ends. Beat checks
  that connection every ``CHECK_EVERY`` seconds and exits if it was lost (the server
  restarted), since another beat may have taken the lock meanwhile; its supervisor
  (compose's restart policy, ``scripts/run-dev``) starts it again.
- SQLite: an exclusive ``flock`` on a file beside the database, which the kernel releases
  when the process ends, however it ends.

``CELERY_BEAT_SCHEDULER`` names :class:`LockedDatabaseScheduler`, django-celery-beat's
scheduler with the lock taken before the schedule is loaded.
"""

from __future__ import annotations

import fcntl
import logging
import time
from typing import Any

from django.conf import settings
from django_celery_beat.schedulers import DatabaseScheduler

log = logging.getLogger(__name__)

# pg_try_advisory_lock's key: any constant the arena uses for nothing else ("beat").
ADVISORY_KEY = 0x62656174
CHECK_EVERY = 30.0


class BeatLockHeld(SystemExit):
    """Another beat holds the lock: this one exits."""

    def __init__(self, where: str) -> None:
        log.critical("beat: another beat is running (it holds %s); this one exits.", where)
        super().__init__(1)


class _Lock:
    """The beat lock of this process: taken once, held until the process ends."""

    def __init__(self) -> None:
        self._held: Any = None
        self._checked = 0.0

    def acquire(self) -> None:
        if self._held is not None:
            return
        database = settings.DATABASES["default"]
        if database["ENGINE"] == "django.db.backends.sqlite3":
            self._held = _file_lock(f"{database['NAME']}.beat.lock")
        else:
            self._held = _advisory_lock(database)
        self._checked = time.monotonic()
        log.info("beat: holds the beat lock; no other beat of this database will run.")

    def check(self) -> None:
        """Exit when the PostgreSQL connection that holds the lock is gone."""
        if self._held is None or hasattr(self._held, "fileno"):
            return
        now = time.monotonic()
        if now - self._checked < CHECK_EVERY:
            return
        self._checked = now
        try:
            self._held.execute("SELECT 1")
        except Exception:  # noqa: BLE001 - any failure means the lock may be lost
            log.critical("beat: lost the database connection that holds its lock; exits.")
            raise SystemExit(1) from None


def _file_lock(path: str):
    file = open(path, "a")  # noqa: SIM115 - held open for the life of the process
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.close()
        raise BeatLockHeld(path) from None
    return file


def _advisory_lock(database: dict):
    import psycopg

    connection = psycopg.connect(
        dbname=database["NAME"],
        user=database.get("USER") or None,
        password=database.get("PASSWORD") or None,
        host=database.get("HOST") or None,
        port=database.get("PORT") or None,
        connect_timeout=database.get("OPTIONS", {}).get("connect_timeout", 5),
        autocommit=True,
    )
    (taken,) = connection.execute("SELECT pg_try_advisory_lock(%s)", [ADVISORY_KEY]).fetchone()
    if not taken:
        connection.close()
        raise BeatLockHeld(f"PostgreSQL advisory lock {ADVISORY_KEY}")
    return connection


LOCK = _Lock()


class LockedDatabaseScheduler(DatabaseScheduler):
    """django-celery-beat's scheduler, run only while this process holds the beat lock."""

    def __init__(self, *args, **kwargs) -> None:
        LOCK.acquire()
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs):
        LOCK.check()
        return super().tick(*args, **kwargs)
