"""Matches of bots for the tests of the bot-turn driver: made, played up to a seat,
made overdue, and checked to have ended by the rules."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from bots import driver
from bots.models import Bot
from cardkit.engine.info import EndReason
from games.models import Match, Move
from games.seating import SeatHolder
from games.services import match_create
from games.verification import match_verification

# The move time limit of the tests whose bots misbehave.
TIME_LIMIT = 0.5
# How long past the time limit a forfeit may take: the moves of the built-in opponent
# before the bot's turn, the database writes and thread scheduling.
SLACK = 1.0


def new_match(creator, bots: list[Bot], *, game="durak", time_limit=5.0, **options) -> Match:
    """Create and start a match of ``bots``, in order, by ``creator``."""
    return match_create(
        creator=creator,
        game=game,
        players=len(bots),
        seats=[SeatHolder(bot=bot) for bot in bots],
        move_time_limit=time_limit,
        **options,
    )


def assert_finished_by_the_rules(match: Match) -> None:
    """Assert that ``match`` ended by the rules (no forfeit), with a log that verifies."""
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.end_reason in set(EndReason)
    assert match.forfeit_seat is None
    assert Move.objects.filter(match=match).count() == match.ply > 0
    verification = match_verification(match)
    assert verification.ok, verification.problems


def play_until_seat_to_move(match: Match, seat: int) -> None:
    """Let the built-in bots move until ``seat`` is to move (never asking that seat)."""
    match.refresh_from_db()
    while match.to_move != seat:
        assert driver.bot_turns_play(match_id=match.pk, max_moves=1) == 1
        match.refresh_from_db()


def overdue(match: Match) -> None:
    """Put the match's deadline in the past, as when its driver died or its turn notice
    was lost with the broker."""
    Match.objects.filter(pk=match.pk).update(deadline_at=timezone.now() - timedelta(seconds=5))
