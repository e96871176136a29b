"""Celery application of the card arena.

All configuration lives in Django settings under the ``CELERY_`` prefix. Workers and beat
log through Django's ``LOGGING`` (``LOG_FORMAT``, ``LOG_LEVEL``), not Celery's own set-up,
so their lines have the same shape as the web server's; a task whose arguments include
``match_id`` logs every line with it.
"""

import inspect
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

app = Celery("cardserver")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


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
