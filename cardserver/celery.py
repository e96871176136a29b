"""Celery application of the card arena.

All configuration lives in Django settings under the ``CELERY_`` prefix. Workers and beat
log through Django's ``LOGGING`` (``LOG_FORMAT``, ``LOG_LEVEL``), not Celery's own set-up,
so their lines have the same shape as the web server's; a task whose arguments include
``match_id`` logs every line with it.
"""

import inspect
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery import Celery, signals

from cardserver.broker_held import HeldMessagesRenew

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

app = Celery("cardserver")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Redis: a worker renews the messages it holds, and puts back those a dead one held.
app.steps["consumer"].add(HeldMessagesRenew)

_UNSET = object()


@contextmanager
def settings_override(**values: Any) -> Iterator[None]:
    """Change settings of this process's Celery app for the block, then restore them.

        with settings_override(task_always_eager=True): ...

    Each is set under its ``CELERY_`` name: Celery 5.6 looks a setting up in Django's
    settings before it looks at a change made under the setting's own name, so
    ``app.conf.task_always_eager = True`` would be ignored.
    """
    conf = app.conf
    saved = {}
    for name, value in values.items():
        key = f"CELERY_{name.upper()}"
        saved[key] = conf.changes.get(key, _UNSET)
        conf[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is _UNSET:
                conf.changes.pop(key, None)
            else:
                conf[key] = value


@contextmanager
def eager_tasks() -> Iterator[None]:
    """Run the Celery tasks sent in the block (bot turns, deadline checks) in this process,
    as they are sent, their errors raised to the sender."""
    from celery._state import _set_task_join_will_block, task_join_will_block

    join_will_block = task_join_will_block()
    # Each eager task logs a line at INFO; thousands of them say nothing.
    trace_log = logging.getLogger("celery.app.trace")
    level = trace_log.level
    trace_log.setLevel(logging.WARNING)
    try:
        with settings_override(task_always_eager=True, task_eager_propagates=True):
            yield
    finally:
        trace_log.setLevel(level)
        # Celery keeps "a task is running here" in one process-wide flag that each eager
        # task sets and restores; eager tasks in several threads at once (a live server's)
        # can leave it set, and then every later `.get()` of a result refuses to block.
        _set_task_join_will_block(join_will_block)


@signals.setup_logging.connect
def _use_django_logging(**kwargs) -> None:
    """Configure logging from Django's ``LOGGING`` (connecting here replaces Celery's)."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_connections(task=None, **extra) -> None:
    """Drop database connections that failed or outlived CONN_MAX_AGE, as Django does at
    the start and end of a request (the fix-up keeps them: ``CELERY_DB_REUSE_MAX``)."""
    if task is not None and getattr(task.request, "is_eager", False):
        return  # an eager task runs inside its caller's work, transaction maybe included
    from django.db import close_old_connections

    close_old_connections()


@signals.task_prerun.connect
def _log_match_id(task=None, args=None, kwargs=None, **extra) -> None:
    """Make the task's log lines carry its ``match_id`` argument, if it has one."""
    from cardserver.logs import set_match_id

    set_match_id(_match_id_argument(task, args or (), kwargs or {}))


@signals.task_postrun.connect
def _forget_match_id(**extra) -> None:
    from cardserver.logs import set_match_id

    set_match_id(None)


def _match_id_argument(task, args, kwargs) -> int | None:
    if "match_id" in kwargs:
        return kwargs["match_id"]
    try:
        bound = inspect.signature(task.run).bind_partial(*args, **kwargs)
    except (TypeError, ValueError, AttributeError):
        return None
    return bound.arguments.get("match_id")
