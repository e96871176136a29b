"""How tournament actions send their Celery tasks: after the transaction commits, or not
at all while a process plays the matches itself (``inline_play``). Shared by
``tournaments.services``, ``tournaments.ladder`` and ``tournaments.sequential``."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction

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

    from tournaments.tasks import play_tournament_match

    if match_ids:
        group(play_tournament_match.s(match_id) for match_id in match_ids).apply_async()


def send_fit(pool: str) -> None:
    """Send a task to fit the ratings of this pool again."""
    from tournaments.tasks import fit_pool_ratings

    fit_pool_ratings.delay(pool)
