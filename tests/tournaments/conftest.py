"""Factories for bots, finished matches and tournaments."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest


@pytest.fixture
def bot_factory(db, user_factory):
    """Return ``bot_factory(player="random", owner=None, name=None)``: a built-in bot.

    Names are unique (``t-random-1``, ...); without an owner each bot has its own.
    """
    from bots.models import Bot

    numbers = itertools.count(1)

    def create(player: str = "random", *, owner=None, name: str | None = None, **fields):
        number = next(numbers)
        fields = {
            "kind": Bot.Kind.BUILTIN,
            "builtin": player,
            "games": ["durak", "volynshchik"],
        } | fields
        return Bot.objects.create(
            name=name or f"t-{player}-{number}", owner=owner or user_factory(), **fields
        )

    return create


@pytest.fixture
def finished_match(db):
    """Return ``finished_match(bots, loser, game="durak", rated=True)``: a finished match.

    Matches finish a minute apart, in the order they are made, unless ``finished_at`` is
    given.
    """
    from django.utils import timezone

    from games.models import Match, Seat

    clock = itertools.count(1)
    start = timezone.now() - timedelta(days=1)

    def create(bots, loser, *, game="durak", rated=True, finished_at=None, **fields):
        match = Match.objects.create(
            game=game,
            players=len(bots),
            deck_size=36 if game == "durak" else 32,
            status=Match.Status.FINISHED,
            rated=rated,
            loser=loser,
            result={"loser": loser, "out_order": []},
            end_reason="normal",
            finished_at=finished_at or start + timedelta(minutes=next(clock)),
            **fields,
        )
        Seat.objects.bulk_create(
            Seat(match=match, index=index, bot=bot) for index, bot in enumerate(bots)
        )
        return match

    return create


@pytest.fixture
def quiet_turns(monkeypatch):
    """Send no per-turn Celery messages: the tournament or ladder task plays the match itself."""
    import bots.tasks

    monkeypatch.setattr(bots.tasks.match_turn_started, "delay", lambda match_id, ply: None)
