"""Which queue a match's task goes to: interactive play apart from batch work.

A Celery router (``CELERY_TASK_ROUTES``). The tasks that play or watch an arena turn
(``MATCH_TASKS``) go to the interactive queue (``INTERACTIVE_QUEUE``) when their match is
not batch work (``Match.batch``: a tournament's, the ladder's or a sequential test's), so
that a person, a challenger or a client bot waiting on a built-in or HTTP bot is served by
a worker that tournaments and the ladder never occupy. Every other task, and a batch
match's, takes the default queue (or the one its sender names).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

# Task name -> how to read its match id from (args, kwargs).
MATCH_TASKS = {
    "bots.tasks.match_turn_started": lambda args, kwargs: _first(args, kwargs, "match_id"),
    "bots.tasks.play_bot_turns": lambda args, kwargs: _first(args, kwargs, "match_id"),
    "bots.tasks.bot_call_dispatch": lambda args, kwargs: (
        _first(args, kwargs, "call") or {}
    ).get("match_id"),
    "games.tasks.enforce_move_deadline": lambda args, kwargs: _first(args, kwargs, "match_id"),
}


def route_task(name: str, args: tuple, kwargs: dict, options: dict, task=None, **extra) -> Any:
    """Return ``{"queue": <interactive queue>}`` for a match task of interactive play, else
    None (the default route)."""
    read_match_id = MATCH_TASKS.get(name)
    if read_match_id is None:
        return None
    queue = interactive_queue()
    if not queue:
        return None
    match_id = read_match_id(args or (), kwargs or {})
    if not isinstance(match_id, int) or match_is_batch(match_id):
        return None
    return {"queue": queue}


def interactive_queue() -> str:
    """Return the interactive queue of the default queue in use ("" when there is none).

    A test or benchmark that sends its tasks to a default queue of its own
    (``settings_override(task_default_queue=...)``) gets ``<queue>-interactive``, which
    its workers read.
    """
    from cardserver.celery import app

    configured = settings.INTERACTIVE_QUEUE
    default = app.conf.task_default_queue
    if not configured or default == settings.CELERY_TASK_DEFAULT_QUEUE:
        return configured
    return f"{default}-interactive"


def match_is_batch(match_id: int) -> bool:
    """Whether the match is batch work; an unknown match counts as batch (its task will
    find nothing to do)."""
    from games.models import Match

    batch = Match.objects.filter(pk=match_id).values_list("batch", flat=True).first()
    return batch is None or batch


def _first(args: tuple, kwargs: dict, name: str) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[0] if args else None
