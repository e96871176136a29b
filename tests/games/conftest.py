"""Fixtures of the match service tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def celery_eager():
    """Run tasks in the sending process (the SQLite pass has no worker)."""
    from cardserver import celery_app

    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = before
