"""What a process does as it becomes a pool process (``bots.pool.call_pool``): its
garbage collector is set for a process whose objects so far live as long as it does."""

from __future__ import annotations

import gc

import pytest

from bots import pool


class _Pool:
    """In place of ``CallPool``: no event loop, no threads."""


@pytest.fixture
def collector(monkeypatch) -> list:
    """What the pool asks of the garbage collector, kept here instead of done."""
    asked: list = []
    monkeypatch.setattr(gc, "collect", lambda *args: asked.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: asked.append("freeze"))
    monkeypatch.setattr(gc, "set_threshold", lambda *args: asked.append(args))
    monkeypatch.setattr(pool, "CallPool", _Pool)
    monkeypatch.setattr(pool, "_POOL", None)
    return asked


def test_a_pool_process_freezes_what_it_made_and_lets_a_turns_objects_die_young(collector):
    made = pool.call_pool()

    assert isinstance(made, _Pool)
    # Freed first, so that no garbage is frozen for the process's life.
    assert collector == ["collect", "freeze", (20_000, 10, 10)]
    assert pool.call_pool() is made
    assert len(collector) == 3
