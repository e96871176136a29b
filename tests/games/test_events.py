"""The "match changed" announcement: one event per committed change, after the commit."""

from __future__ import annotations

import pytest
from django.db import transaction

from games.events import Change, match_changed_subscribe, match_changed_unsubscribe
from games.match_endings import match_forfeit
from games.models import Match
from games.seating import SeatHolder
from games.services import match_cancel, match_create, match_join
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def events():
    seen = []
    match_changed_subscribe(seen.append)
    yield seen
    match_changed_unsubscribe(seen.append)


def test_a_started_match_announces_its_start_at_ply_zero(user_factory, events):
    match = start_match([user_factory(), user_factory()])

    assert [(e.match_id, e.change, e.ply, e.status) for e in events] == [
        (match.pk, Change.STARTED, 0, Match.Status.ACTIVE)
    ]
    assert events[0].to_move == match.to_move


def test_every_move_is_announced_once_with_its_new_ply(user_factory, events):
    match = play_random_moves(start_match([user_factory(), user_factory()]), 5)

    moves = [e for e in events if e.change == Change.MOVED]
    assert [e.ply for e in moves] == [1, 2, 3, 4, 5]
    assert all(e.match_id == match.pk for e in moves)


def test_a_forfeit_announces_the_finish(user_factory, events):
    match = start_match([user_factory(), user_factory()])
    match_forfeit(match_id=match.pk, seat=0, code="resign", detail="resigned")

    assert events[-1].change == Change.FINISHED
    assert events[-1].status == Match.Status.FINISHED
    assert events[-1].to_move is None


def test_a_join_that_leaves_a_seat_open_announces_the_join(user_factory, events):
    creator = user_factory()
    match = match_create(
        creator=creator, game="durak", players=3, seats=[SeatHolder(user=creator), None, None]
    )
    match_join(match_id=match.pk, user=user_factory())

    assert [e.change for e in events] == [Change.JOINED]


def test_a_cancel_announces_the_abort(user_factory, events):
    creator = user_factory()
    match = match_create(
        creator=creator, game="durak", players=2, seats=[SeatHolder(user=creator), None]
    )
    match_cancel(match_id=match.pk, user=creator)

    assert [(e.change, e.status) for e in events] == [(Change.ABORTED, Match.Status.ABORTED)]


def test_nothing_is_announced_for_a_change_that_rolls_back(user_factory, events):
    users = [user_factory(), user_factory()]
    with pytest.raises(RuntimeError), transaction.atomic():
        start_match(users)
        raise RuntimeError("rolled back")

    assert events == []


def test_a_failing_handler_does_not_stop_the_others(user_factory, events):
    def broken(event):
        raise ValueError("broken subscriber")

    match_changed_subscribe(broken)
    try:
        start_match([user_factory(), user_factory()])
    finally:
        match_changed_unsubscribe(broken)

    assert [e.change for e in events] == [Change.STARTED]
