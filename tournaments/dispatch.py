"""How tournament actions send their Celery tasks: after the transaction commits, or not
at all while a process plays the matches itself (``inline_play``). Shared by
``tournaments.services``, ``tournaments.ladder`` and ``tournaments.sequential``.

The tasks themselves (``tournaments.tasks``) wrap those modules, so none of them imports
the tasks: ``TournamentsConfig.ready`` hands the tasks they send down to ``TASKS`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from types import SimpleNamespace

from celery import Task
from django.db import transaction

# The tasks the actions send, by name (``tasks_connect``): play_tournament_match,
# fit_pool_ratings, play_ladder_match, play_sequential_pair.
TASKS = SimpleNamespace()


def tasks_connect(**tasks: Task) -> None:
    """Hand down the tasks the actions send (``TournamentsConfig.ready``)."""
    vars(TASKS).update(tasks)

# Set while a management command plays a tournament in its own process: then the services
# send no Celery task, and the caller plays the matches itself.
_INLINE: ContextVar[bool] = ContextVar("tournaments_inline", default=False)


@contextmanager
def inline_play():
    """Within this block, send no Celery task: the caller plays every match itself."""
    token = _INLINE.set(True)
    try:
        yield
    finally:
        _INLINE.reset(token)


def inline_playing() -> bool:
    """Whether a process plays the matches itself (within ``inline_play``)."""
    return _INLINE.get()


def after_commit(send: Callable[[], None]) -> None:
    """Call ``send`` (which sends tasks) when the transaction commits, unless inline."""
    if not _INLINE.get():
        transaction.on_commit(send)


def send_round(match_ids: list[int]) -> None:
    """Send a task to play each of these tournament matches."""
    from celery import group

    if match_ids:
        group(TASKS.play_tournament_match.s(match_id) for match_id in match_ids).apply_async()


def send_fit(pool: str) -> None:
    """Send a task to fit the ratings of this pool again."""
    TASKS.fit_pool_ratings.delay(pool)
