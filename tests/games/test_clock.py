"""The clock: a seat that lets its time limit pass loses the match, on time.

Enforced by the match's deadline watch (a Celery task sent when the match starts), by the
periodic sweep, and by the move service itself for a move that comes too late. The tests
pass ``now`` to the services, or use time limits of a fraction of a second.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import timedelta

import pytest
from django_celery_beat.models import PeriodicTask

from bots import tasks as bot_tasks
from games import errors, tasks
from games.clock import (
    DEADLINE_GRACE,
    DEADLINE_WATCH_MAX_WAIT,
    match_deadline_enforce,
    matches_overdue_forfeit,
)
from games.models import Match
from games.move_services import match_move_submit
from games.selectors import match_state
from tests.matches import play_random_moves, start_match, wait_while_active
from tests.processes import start_solo_worker, worker_database_url


@pytest.fixture
def pair(user_factory):
    return [user_factory(), user_factory()]


@pytest.fixture
def no_watch(monkeypatch):
    """Send no deadline watch at the start of a match: the test runs the clock itself."""
    monkeypatch.setattr(tasks, "deadline_watch_send", lambda match_id, countdown: None)


def later(match: Match, seconds: float):
    return match.deadline_at + timedelta(seconds=seconds)


@pytest.mark.django_db
def test_every_turn_has_a_deadline_one_time_limit_after_it_starts(pair):
    match = play_random_moves(start_match(pair, move_time_limit=7.5), 3)

    assert match.deadline_at - match.turn_started_at == timedelta(seconds=7.5)


@pytest.mark.django_db
def test_seat_that_lets_its_deadline_pass_loses_on_time(pair):
    match = play_random_moves(start_match(pair, move_time_limit=10), 5)
    seat = match.to_move

    forfeited = match_deadline_enforce(match_id=match.pk, now=later(match, 0.001))

    match.refresh_from_db()
    assert forfeited is True
    assert (match.status, match.loser, match.end_reason) == ("finished", seat, "timeout")
    assert match.forfeit_reason == f"seat {seat} did not move within the time limit of 10 s"


@pytest.mark.django_db
def test_timeout_in_a_fool_series_loses_the_series(pair):
    match = play_random_moves(start_match(pair, format="fool"), 90)
    seat = match.to_move

    match_deadline_enforce(match_id=match.pk, now=later(match, 1))

    match.refresh_from_db()
    assert match.loser == match.result["loser"] == seat
    assert set(match.result) == {"loser", "letters", "deals"}


@pytest.mark.django_db
def test_deadline_not_yet_passed_changes_nothing(pair):
    match = start_match(pair)

    forfeited = match_deadline_enforce(match_id=match.pk, now=later(match, -0.5))

    match.refresh_from_db()
    assert (forfeited, match.status) == (False, "active")


@pytest.mark.django_db
def test_deadline_check_of_a_ply_the_match_has_left_changes_nothing(pair):
    match = play_random_moves(start_match(pair), 2)

    forfeited = match_deadline_enforce(match_id=match.pk, ply=1, now=later(match, 60))

    assert forfeited is False


@pytest.mark.django_db
def test_move_after_the_deadline_and_its_grace_loses_on_time_instead(pair):
    match = start_match(pair)
    move = match_state(match).legal_moves()[0]

    with pytest.raises(errors.MatchNotActive):
        match_move_submit(
            match_id=match.pk, seat=match.to_move, ply=0, move=move,
            now=later(match, DEADLINE_GRACE + 0.1),
        )  # fmt: skip

    match.refresh_from_db()
    assert (match.status, match.end_reason, match.ply) == ("finished", "timeout", 0)


@pytest.mark.django_db
def test_move_within_the_grace_is_played(pair):
    match = start_match(pair)
    move = match_state(match).legal_moves()[0]

    match_move_submit(
        match_id=match.pk, seat=match.to_move, ply=0, move=move,
        now=later(match, DEADLINE_GRACE / 2),
    )  # fmt: skip

    match.refresh_from_db()
    assert match.ply == 1


@pytest.mark.django_db
def test_sweep_forfeits_every_overdue_match_and_no_other(pair):
    overdue = [start_match(pair, move_time_limit=1) for _ in range(2)]
    in_time = start_match(pair, move_time_limit=3600)

    forfeited = matches_overdue_forfeit(now=later(overdue[1], 1))

    assert sorted(forfeited) == sorted(m.pk for m in overdue)
    assert Match.objects.get(pk=in_time.pk).status == Match.Status.ACTIVE


@pytest.mark.django_db
def test_sweep_runs_every_few_seconds_from_celery_beat():
    task = PeriodicTask.objects.get(task="games.tasks.sweep_overdue_matches")

    assert task.enabled and task.interval.period == "seconds" and task.interval.every <= 10


@pytest.mark.django_db(transaction=True)
def test_sweep_task_forfeits_a_match_whose_time_ran_out(pair, celery_eager, no_watch):
    match = start_match(pair, move_time_limit=0.05)
    time.sleep(0.1)

    forfeited = tasks.sweep_overdue_matches.delay().get()

    assert forfeited == [match.pk]
    assert Match.objects.get(pk=match.pk).end_reason == "timeout"


@pytest.mark.django_db(transaction=True)
def test_deadline_watch_task_forfeits_a_match_whose_time_ran_out(pair, celery_eager, no_watch):
    match = start_match(pair, move_time_limit=0.05)
    time.sleep(0.1)

    assert tasks.enforce_move_deadline.delay(match.pk).get() is True
    assert Match.objects.get(pk=match.pk).end_reason == "timeout"


@pytest.mark.django_db
def test_match_start_sends_its_deadline_watch(
    pair, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(
        tasks.enforce_move_deadline,
        "apply_async",
        lambda args, countdown: sent.append((args, countdown)),
    )

    with django_capture_on_commit_callbacks(execute=True):
        match = start_match(pair, move_time_limit=4)

    assert sent == [((match.pk,), 4 + DEADLINE_GRACE)]


@pytest.mark.django_db
def test_deadline_watch_run_by_a_worker_sends_itself_again_for_the_current_deadline(
    pair, monkeypatch
):
    match = play_random_moves(start_match(pair, move_time_limit=30), 2)
    sent = []
    monkeypatch.setattr(
        tasks.enforce_move_deadline,
        "apply_async",
        lambda args, countdown: sent.append((args, countdown)),
    )

    forfeited = tasks.enforce_move_deadline.run(match.pk)

    assert forfeited is False
    [(args, countdown)] = sent
    assert args == (match.pk,)
    assert 30 - 1 < countdown - DEADLINE_GRACE <= 30


@pytest.mark.django_db
def test_deadline_watch_of_a_long_time_limit_looks_again_within_half_an_hour(
    pair, monkeypatch
):
    # A broker gives a message held longer than its visibility timeout to another worker.
    match = play_random_moves(start_match(pair, move_time_limit=24 * 3600), 2)
    sent = []
    monkeypatch.setattr(
        tasks.enforce_move_deadline,
        "apply_async",
        lambda args, countdown: sent.append((args, countdown)),
    )

    assert tasks.enforce_move_deadline.run(match.pk) is False
    assert sent == [((match.pk,), DEADLINE_WATCH_MAX_WAIT)]
    assert DEADLINE_WATCH_MAX_WAIT < 3600


@pytest.mark.django_db
def test_deadline_watch_run_eagerly_checks_once_and_stops(pair, monkeypatch, celery_eager):
    match = start_match(pair, move_time_limit=30)
    sent = []
    monkeypatch.setattr(
        tasks.enforce_move_deadline, "apply_async", lambda *args, **kwargs: sent.append(args)
    )

    assert tasks.enforce_move_deadline.apply(args=(match.pk,)).get() is False
    assert sent == []


@pytest.mark.django_db
def test_deadline_watch_of_a_finished_match_stops(pair, monkeypatch):
    match = start_match(pair)
    match_deadline_enforce(match_id=match.pk, now=later(match, 1))
    sent = []
    monkeypatch.setattr(
        tasks.enforce_move_deadline, "apply_async", lambda *args, **kwargs: sent.append(args)
    )

    assert tasks.enforce_move_deadline.run(match.pk) is False
    assert sent == []


@pytest.mark.django_db
def test_moves_to_seats_of_people_send_no_task(
    pair, monkeypatch, django_capture_on_commit_callbacks
):
    from bots import tasks as bot_tasks

    match = start_match(pair)
    sent = []
    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *args: sent.append(args))

    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(match, 5)

    assert sent == []


@pytest.mark.django_db
def test_turn_of_an_arena_bot_hands_the_match_to_the_bot_driver(pair, monkeypatch):
    import bots.driver

    match = start_match(pair)
    Match.objects.filter(pk=match.pk).update(arena_seats=1 << match.to_move)
    played = []
    monkeypatch.setattr(
        bots.driver, "bot_turns_play", lambda match_id, **_: played.append(match_id)
    )

    bot_tasks.match_turn_started(match.pk, 0)
    bot_tasks.match_turn_started(match.pk, 5)  # a ply the match is not at: nothing to do

    assert played == [match.pk]


@pytest.mark.django_db
def test_turn_of_a_person_is_not_handed_to_the_bot_driver(pair, monkeypatch):
    import bots.driver

    match = start_match(pair)
    played = []
    monkeypatch.setattr(
        bots.driver, "bot_turns_play", lambda match_id, **_: played.append(match_id)
    )

    bot_tasks.match_turn_started(match.pk, 0)

    assert played == []


# --- A real worker ----------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.real_services
@pytest.mark.django_db(transaction=True)
def test_worker_forfeits_a_match_whose_seat_let_its_time_run_out(pair, monkeypatch, tmp_path):
    # A queue of this test's own keeps the worker away from other tests' messages.
    queue = f"test-clock-{uuid.uuid4().hex}"
    monkeypatch.setattr(
        tasks,
        "deadline_watch_send",
        lambda match_id, countdown: tasks.enforce_move_deadline.apply_async(
            (match_id,), countdown=countdown, queue=queue
        ),
    )
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"CELERY_TASK_ALWAYS_EAGER", "DATABASE_URL"}
    }
    environment |= {
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "DATABASE_URL": worker_database_url(),
        "CARDSERVER_VAR_DIR": str(tmp_path / "var"),
    }
    worker = start_solo_worker(queue, environment)
    try:
        match = start_match(pair, move_time_limit=0.5)
        seat = match.to_move
        wait_while_active(match)
    finally:
        worker.terminate()
        _, errors_out = worker.communicate(timeout=60)

    assert match.status == Match.Status.FINISHED, errors_out
    assert (match.end_reason, match.loser, match.ply) == ("timeout", seat, 0)


@pytest.mark.django_db
def test_deadline_watch_of_a_match_that_does_not_exist_does_nothing():
    assert tasks.enforce_move_deadline.run(987654) is False
