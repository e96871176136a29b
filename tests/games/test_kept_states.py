"""The engine states a process keeps for the next move of a match it moved
(``games.selectors``): only those a move may still follow, so that a process that plays
match after match does not grow with every match it has played."""

from __future__ import annotations

import pytest

from games import selectors
from games.models import Match
from games.selectors import match_state_known, states_kept
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(user_factory):
    return [user_factory(), user_factory()]


def test_a_match_played_to_its_end_leaves_no_state_in_the_process(
    pair, django_capture_on_commit_callbacks
):
    match = start_match(pair)
    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(match, 3)
    assert match_state_known(match.pk) == 3

    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(match, 10_000)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match_state_known(match.pk) is None and states_kept() == 0


def test_a_state_left_unused_goes_when_another_is_kept(
    pair, django_capture_on_commit_callbacks, monkeypatch
):
    # A match that ended in another process (a forfeit on the clock) is never moved here
    # again: its state goes once it has been unused for longer than the idle time.
    first, second = start_match(pair), start_match(pair)
    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(first, 2)
    later = selectors._states_clock() + selectors._STATES_IDLE + 1
    monkeypatch.setattr(selectors, "_states_clock", lambda: later)

    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(second, 2)

    assert match_state_known(first.pk) is None
    assert states_kept() == 1


def test_at_most_the_cap_of_states_is_kept_least_recently_used_first_out(
    pair, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(selectors, "_STATES_MAX", 2)
    matches = [start_match(pair) for _ in range(3)]

    with django_capture_on_commit_callbacks(execute=True):
        for match in matches:
            play_random_moves(match, 1)

    assert [match_state_known(match.pk) for match in matches] == [None, 1, 1]
