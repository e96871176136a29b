"""The bot-turn driver when drivers, workers and deadlines meet one turn: a claimed turn is
asked once, a lapsed one is taken over (the one evidence of a dead worker), an overdue
arena turn is neither forfeited nor handed over for its lateness, a turn whose claims
keep lapsing is given up saying what failed, and a pool call sent too late is queued
anew."""

from __future__ import annotations

import time
from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bots import driver
from bots.models import BotTurnLease
from cardkit.serve import load_strategy
from games.models import Match, Move
from tests.bots.arena_matches import (
    assert_finished_by_the_rules,
    new_match,
    overdue,
    play_until_seat_to_move,
)
from tests.bots.conftest import (
    SECRET,
    answer_500,
    first_legal_move,
)


def test_claimed_turn_is_not_asked_twice(user, builtin, http_bot, http_bot_record):
    url, server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [web, builtin["random"]], time_limit=60)
    play_until_seat_to_move(match, 0)
    # Another worker is playing this match's bot turns right now.
    BotTurnLease.objects.create(
        match_id=match.pk,
        holder="another-worker",
        ply=match.ply,
        expires_at=timezone.now() + timedelta(seconds=60),
    )

    assert driver.bot_turns_play(match_id=match.pk) == 0
    assert server.requests == []
    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE


def test_lapsed_claim_is_taken_over(user, builtin, http_bot, http_bot_record):
    url, server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=60)
    play_until_seat_to_move(match, 1)
    # A worker died while it played this match.
    BotTurnLease.objects.create(
        match_id=match.pk,
        holder="dead-worker",
        ply=match.ply,
        expires_at=timezone.now() - timedelta(seconds=1),
    )

    driver.bot_turns_play(match_id=match.pk)

    match.refresh_from_db()
    assert match.end_reason == "http_status"
    assert len(server.requests) == 1


def test_turn_sent_after_its_deadline_gives_the_bot_its_whole_time_and_counts_the_delay(
    user, builtin, http_bot, http_bot_record
):
    url, server = http_bot(first_legal_move)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=60)
    play_until_seat_to_move(match, 1)
    ply = Match.objects.get(pk=match.pk).ply
    # The arena comes to ask the bot after the move's deadline (a worker was busy): the
    # delay is the arena's, and the bot still has its whole limit from the send.
    Match.objects.filter(pk=match.pk).update(deadline_at=timezone.now() - timedelta(seconds=5))

    driver.bot_turns_play(match_id=match.pk, max_moves=1)

    match.refresh_from_db()
    assert match.forfeit_seat is None and match.ply == ply + 1
    assert server.requests[0]["body"]["time_limit_ms"] == 60_000
    move = Move.objects.get(match=match, ply=ply)
    assert move.queued_at <= move.sent_at <= move.received_at


def test_built_in_bots_resumed_after_their_deadline_play_on(user, builtin):
    match = new_match(user, [builtin["random"], builtin["greedy"]], time_limit=1)
    overdue(match)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)


def test_sweep_leaves_an_overdue_built_in_turn_alone_however_late(
    user, builtin, django_capture_on_commit_callbacks
):
    # Its deadline passing is no evidence of a dead worker: the turn may wait in a queue.
    from games.clock import matches_overdue_forfeit

    match = new_match(user, [builtin["random"], builtin["greedy"]], time_limit=1)
    overdue(match)

    with django_capture_on_commit_callbacks(execute=True) as sent:
        forfeited = matches_overdue_forfeit()

    assert forfeited == [] and sent == []
    match.refresh_from_db()
    assert (match.status, match.ply, match.forfeit_seat) == (Match.Status.ACTIVE, 0, None)


def test_only_a_match_with_a_seat_the_arena_does_not_play_gets_a_deadline_watch(
    user, user_factory, builtin, monkeypatch, django_capture_on_commit_callbacks
):
    # The watch keeps a person's (or a client bot's) clock; an arena seat's overdue turn
    # is handed over again by the sweep and the resumption of abandoned turns.
    from bots import tasks as bot_tasks
    from games import tasks as match_tasks
    from games.seating import SeatHolder
    from games.services import match_create

    watches = []
    monkeypatch.setattr(
        match_tasks.enforce_move_deadline,
        "apply_async",
        lambda args, countdown: watches.append(args),
    )
    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *args: None)

    with django_capture_on_commit_callbacks(execute=True):
        bots_only = new_match(user, [builtin["random"], builtin["greedy"]])
        with_person = match_create(
            creator=user, game="durak", players=2,
            seats=[SeatHolder(bot=builtin["random"]), SeatHolder(user=user_factory())],
        )  # fmt: skip

    assert bots_only.status == with_person.status == Match.Status.ACTIVE
    assert watches == [(with_person.pk,)]


def test_deadline_watch_leaves_an_overdue_built_in_turn_alone_and_looks_again_later(
    user, builtin, monkeypatch, django_capture_on_commit_callbacks
):
    from games import tasks as match_tasks
    from games.clock import DEADLINE_GRACE

    match = new_match(user, [builtin["random"], builtin["greedy"]], time_limit=1)
    overdue(match)
    watches = []
    monkeypatch.setattr(
        match_tasks.enforce_move_deadline,
        "apply_async",
        lambda args, countdown: watches.append((args, countdown)),
    )

    with django_capture_on_commit_callbacks() as notices:
        assert match_tasks.enforce_move_deadline.run(match.pk) is False

    assert notices == []
    assert watches == [((match.pk,), match_tasks.ARENA_TURN_RECHECK + DEADLINE_GRACE)]
    match.refresh_from_db()
    assert (match.status, match.ply) == (Match.Status.ACTIVE, 0)


def test_sweep_neither_forfeits_nor_asks_an_overdue_http_bot(
    user, builtin, http_bot, http_bot_record, celery_eager, django_capture_on_commit_callbacks
):
    # The HTTP bot's time runs from its request sent; a turn late in the arena's queue
    # costs it nothing.
    from games.clock import matches_overdue_forfeit

    url, server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=60)
    play_until_seat_to_move(match, 1)
    overdue(match)

    with django_capture_on_commit_callbacks(execute=True):
        assert matches_overdue_forfeit() == []

    match.refresh_from_db()
    assert (match.status, match.forfeit_seat) == (Match.Status.ACTIVE, None)
    assert server.requests == []
    web.refresh_from_db()
    assert web.consecutive_failures == 0


def test_driver_sends_no_turn_notice_for_the_moves_it_plays_itself(
    user, builtin, kit_http_bot, http_bot_record, transactional_db, monkeypatch
):
    from bots import tasks as bot_tasks
    from games import tasks as match_tasks

    notices = []
    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *a: notices.append(a))
    monkeypatch.setattr(match_tasks.enforce_move_deadline, "apply_async", lambda *a, **k: None)
    url, _server = kit_http_bot(SECRET, load_strategy("greedy", seed=1))
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web])
    started = list(notices)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    assert Move.objects.filter(match=match, seat=1).exists()
    assert notices == started


def test_driver_started_again_while_it_plays_returns_at_once_without_a_query(
    user, builtin, transactional_db, monkeypatch
):
    from games import move_services

    match = new_match(user, [builtin["random"], builtin["greedy"]])
    append = move_services.match_moves_append
    inner = []

    def start_again_then_append(*, match_id, ply, moves):
        # What a turn notice run eagerly in this thread would do while the driver plays (a
        # person's move's commit in development, with CELERY_TASK_ALWAYS_EAGER).
        with CaptureQueriesContext(connection) as queries:
            inner.append(driver.bot_turns_play(match_id=match_id))
        inner.append(len(queries.captured_queries))
        return append(match_id=match_id, ply=ply, moves=moves)

    monkeypatch.setattr(move_services, "match_moves_append", start_again_then_append)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    assert inner and set(inner) == {0}


def test_only_an_arena_turn_whose_claim_lapsed_is_handed_over_not_a_queued_or_live_one(
    user, builtin, monkeypatch
):
    from bots import tasks as bot_tasks

    dead, alive, queued = (
        new_match(user, [builtin["random"], builtin["greedy"]]) for _ in range(3)
    )
    long_ago = timezone.now() - timedelta(minutes=10)
    Match.objects.filter(pk__in=[dead.pk, alive.pk, queued.pk]).update(turn_started_at=long_ago)
    # The dead driver's claim lapsed; the live one's runs on; the queued turn has none
    # (its task waits in the queue, however long: no evidence that anything died).
    BotTurnLease.objects.create(match=dead, holder="dead", ply=0, expires_at=long_ago)
    BotTurnLease.objects.create(
        match=alive, holder="alive", ply=0, expires_at=timezone.now() + timedelta(seconds=5)
    )
    sent = []
    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *args: sent.append(args))

    assert bot_tasks.resume_abandoned_turns() == 1

    assert sent == [(dead.pk, 0)]


def test_turn_whose_claim_lapses_past_the_limit_is_aborted_naming_the_dead_worker(
    user, builtin, settings
):
    settings.BOTS_TURN_MAX_LAPSES = 2
    match = new_match(user, [builtin["random"], builtin["greedy"]])
    lapsed = timezone.now() - timedelta(seconds=1)
    BotTurnLease.objects.create(match=match, holder="dead", ply=0, expires_at=lapsed, lapses=2)

    assert driver.bot_turns_play(match_id=match.pk) == 0

    match.refresh_from_db()
    assert (match.status, match.end_reason, match.forfeit_seat) == ("aborted", "arena", None)
    assert "worker playing its turn stopped renewing its claim at ply 0" in match.forfeit_reason
    assert "3 times in a row" in match.forfeit_reason
    assert not BotTurnLease.objects.filter(match=match).exists()
    for bot in (builtin["random"], builtin["greedy"]):
        bot.refresh_from_db()
        assert bot.consecutive_failures == 0


def test_claim_lapsed_at_an_earlier_ply_counts_from_one_again(user, builtin, settings):
    # The match moved on since the last death: it is not a turn that kills its workers.
    settings.BOTS_TURN_MAX_LAPSES = 2
    match = new_match(user, [builtin["random"], builtin["greedy"]])
    play_until_seat_to_move(match, 1 - Match.objects.get(pk=match.pk).to_move)
    lapsed = timezone.now() - timedelta(seconds=1)
    BotTurnLease.objects.create(match=match, holder="dead", ply=0, expires_at=lapsed, lapses=2)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)


def test_turn_notice_that_cannot_be_sent_leaves_a_lapsed_claim_for_the_sweep(
    user, builtin, monkeypatch
):
    from bots import tasks as bot_tasks
    from games.events import Change, MatchChanged

    match = new_match(user, [builtin["random"], builtin["greedy"]])

    def broker_down(*args):
        raise ConnectionError("broker down")

    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", broker_down)
    bot_tasks.match_changed_handle(
        MatchChanged(match.pk, Change.MOVED, 0, "active", 0, arena_to_move=True)
    )
    sent = []
    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *args: sent.append(args))

    assert bot_tasks.resume_abandoned_turns() == 1
    assert sent == [(match.pk, 0)]


def test_call_that_waited_past_its_send_by_is_not_sent_but_queued_anew(
    user, builtin, http_bot, http_bot_record, monkeypatch
):
    from bots import calls, tasks

    url, server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=5.0)
    play_until_seat_to_move(match, 1)
    queued = []
    monkeypatch.setattr(driver, "pool_enabled", lambda: True)
    monkeypatch.setattr(tasks.bot_call, "apply_async", lambda args, queue: queued.append(args[0]))
    driver.bot_turns_play(match_id=match.pk, pool=True)
    (call,) = queued

    late = calls.call_make({**call, "send_by": time.time() - 1})
    calls.answer_play(call, late)

    assert late == {"late": True} and server.requests == []
    assert len(queued) == 2 and queued[1]["queued_at"] == call["queued_at"]
    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE and match.forfeit_seat is None


def test_turn_that_comes_while_the_driver_lets_go_is_played_by_that_driver(
    user, builtin, monkeypatch
):
    """A built-in's driver stops at the person's turn; the person moves before the driver
    lets go of its claim, so the notice of the built-in's next turn finds the match
    claimed and leaves it. The driver letting go plays that turn. Before, nobody did: two
    client-bot matches of the production mixed load stayed at a built-in's turn for ever."""
    import contextvars

    from games.move_services import match_move_submit
    from games.seating import SeatHolder
    from games.selectors import match_state
    from games.services import match_create

    match = match_create(
        creator=user, game="durak", players=2, move_time_limit=60,
        seats=[SeatHolder(user=user), SeatHolder(bot=builtin["random"])],
    )  # fmt: skip

    def person_moves() -> None:
        match.refresh_from_db()
        move = match_state(match).legal_moves()[0]
        match_move_submit(match_id=match.pk, seat=0, ply=match.ply, move=move)

    match.refresh_from_db()
    if match.to_move == 0:
        person_moves()
    real_release = driver.lease_release
    notices: list[int] = []

    def release_after_the_person_moved(match_id: int, holder: str) -> bool:
        if not notices:
            person_moves()
            # The next turn's notice, on another worker (a context of its own), finds
            # this driver's claim live and leaves the turn.
            notices.append(contextvars.Context().run(driver.bot_turns_play, match_id=match_id))
        return real_release(match_id, holder)

    monkeypatch.setattr(driver, "lease_release", release_after_the_person_moved)
    driver.bot_turns_play(match_id=match.pk)

    assert notices == [0]
    match.refresh_from_db()
    assert match.status != Match.Status.ACTIVE or match.to_move == 0, match.ply
    assert not BotTurnLease.objects.filter(match_id=match.pk).exists()
