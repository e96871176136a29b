"""The bot-turn driver: built-in and HTTP bots play whole matches, and every hostile HTTP
bot ends in a forfeit recorded on its match, within the time limit."""

from __future__ import annotations

import json
import socket
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bots import driver, services
from bots.builtin import decision_rng, get_player
from bots.kit.serve import load_strategy
from bots.models import Bot, BotTurnLease
from bots.protocol import MAX_RESPONSE_BYTES, verify_headers
from games.models import Match, Move
from games.play import match_move_submit
from games.seating import SeatHolder
from games.selectors import match_state, match_states, match_verification
from games.services import match_create
from tests.bots.conftest import reply

SECRET = "match-bot-secret"
TIME_LIMIT = 0.5
# How long past the time limit a forfeit may take: the moves of the built-in opponent
# before the bot's turn, the database writes and thread scheduling.
SLACK = 1.0
ENGINE_END_REASONS = {"loser", "both_out", "repetition", "move_limit"}


@pytest.fixture
def builtin(db) -> dict[str, Bot]:
    return {bot.name: bot for bot in services.builtin_bots_ensure()}


@pytest.fixture
def http_bot_record(user):
    """Return ``make(url, name="webbot") -> Bot``: an HTTP bot of ``user`` at ``url``."""

    def make(url: str, name: str = "webbot") -> Bot:
        return Bot.objects.create(
            name=name,
            owner=user,
            kind=Bot.Kind.HTTP,
            url=url,
            secret=SECRET,
            games=["durak", "volynshchik"],
        )

    return make


def new_match(creator, bots: list[Bot], *, game="durak", time_limit=5.0, **options) -> Match:
    return match_create(
        creator=creator,
        game=game,
        players=len(bots),
        seats=[SeatHolder(bot=bot) for bot in bots],
        move_time_limit=time_limit,
        **options,
    )


def assert_finished_by_the_rules(match: Match) -> None:
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.end_reason in ENGINE_END_REASONS
    assert match.forfeit_seat is None
    assert Move.objects.filter(match=match).count() == match.ply > 0
    verification = match_verification(match)
    assert verification.ok, verification.problems


# -- built-in bots ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "players", "options"),
    [
        ("durak", 2, {}),
        ("durak", 4, {"deck_size": 36}),
        ("durak", 2, {"format": "fool"}),
        ("volynshchik", 3, {}),
    ],
    ids=["durak-2", "durak-4", "durak-fool", "volynshchik-3"],
)
def test_builtin_bots_play_a_whole_match_in_one_call(user, builtin, game, players, options):
    bots = [builtin["greedy"], builtin["random"], builtin["greedy"], builtin["random"]]
    match = new_match(user, bots[:players], game=game, **options)

    played = driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    assert played == match.ply


def test_builtin_decisions_replay_exactly_from_the_match_seed(user, builtin):
    match = new_match(user, [builtin["greedy"], builtin["strong"], builtin["random"]])
    driver.bot_turns_play(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.seed_revealed

    seats = {seat.index: seat.bot for seat in match.seats.select_related("bot")}
    log = list(Move.objects.filter(match=match).order_by("ply"))
    for logged, state in zip(log, match_states(match, log), strict=False):
        assert state.to_move == logged.seat
        player = get_player(seats[logged.seat].builtin, match.game)
        rng = decision_rng(match.seed, logged.seat, logged.ply)
        assert player.choose(state.view(logged.seat), state.legal_moves(), rng) == logged.move


def test_driver_stops_when_a_person_is_to_move(user, user_factory, builtin):
    person = user_factory()
    match = match_create(
        creator=user,
        game="durak",
        players=2,
        seats=[SeatHolder(bot=builtin["random"]), SeatHolder(user=person)],
        move_time_limit=60,
    )

    driver.bot_turns_play(match_id=match.pk)

    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE
    assert match.to_move == 1
    assert driver.bot_turns_play(match_id=match.pk) == 0


def test_max_moves_bounds_one_call_and_the_next_call_goes_on(user, builtin):
    match = new_match(user, [builtin["random"], builtin["random"]])

    assert driver.bot_turns_play(match_id=match.pk, max_moves=3) == 3
    assert driver.bot_turns_play(match_id=match.pk, max_moves=2) == 2

    match.refresh_from_db()
    assert match.ply == 5
    assert match.status == Match.Status.ACTIVE


def test_finished_or_unknown_match_is_left_alone(user, builtin):
    match = new_match(user, [builtin["random"], builtin["greedy"]])
    driver.bot_turns_play(match_id=match.pk)

    assert driver.bot_turns_play(match_id=match.pk) == 0
    assert driver.bot_turns_play(match_id=10**9) == 0


def test_task_hands_a_long_match_to_a_new_task(user, builtin, monkeypatch):
    from bots import tasks

    sent = []
    monkeypatch.setattr(tasks, "MOVES_PER_TASK", 4)
    monkeypatch.setattr(tasks.play_bot_turns, "delay", sent.append)
    match = new_match(user, [builtin["random"], builtin["random"]])

    tasks.play_bot_turns(match.pk)

    match.refresh_from_db()
    assert match.ply == 4
    assert sent == [match.pk]


# -- a correct HTTP bot -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "players", "strategy"),
    [("durak", 2, "greedy"), ("volynshchik", 3, "greedy"), ("durak", 3, "random")],
)
def test_correct_http_bot_plays_a_whole_match_against_builtin_bots(
    user, builtin, kit_http_bot, http_bot_record, game, players, strategy
):
    url, server = kit_http_bot(SECRET, load_strategy(strategy, seed=1))
    web = http_bot_record(url)
    match = new_match(user, [web, builtin["greedy"], builtin["random"]][:players], game=game)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    web_moves = Move.objects.filter(match=match, seat=0).count()
    assert web_moves > 0
    web.refresh_from_db()
    assert (web.healthy, web.consecutive_failures) == (True, 0)


def test_http_bot_is_asked_with_its_view_and_legal_moves_signed(
    user, builtin, http_bot, http_bot_record
):
    def first_legal(handler, request):
        verify_headers(SECRET, handler.headers, json.dumps(request["body"]).encode())
        reply(handler, json.dumps({"move": request["body"]["legal_moves"][0]}).encode())

    url, server = http_bot(first_legal)
    web = http_bot_record(url)
    match = new_match(user, [web, builtin["random"]], time_limit=3.0)

    driver.bot_turns_play(match_id=match.pk, max_moves=4)

    first = server.requests[0]["body"]
    assert first["type"] == "move"
    assert first["match_id"] == match.pk
    assert first["game"] == "durak"
    assert first["options"] == {"players": 2, "deck_size": 36, "format": "deal"}
    assert first["seat"] == 0
    assert first["view"]["seat"] == 0 and "hand" in first["view"]
    assert first["legal_moves"]
    assert 0 < first["time_limit_ms"] <= 3000


def test_signature_with_a_wrong_secret_makes_the_kit_bot_refuse_and_forfeit(
    user, builtin, kit_http_bot, http_bot_record
):
    url, _server = kit_http_bot("another-secret")
    web = http_bot_record(url)
    match = new_match(user, [web, builtin["random"]], time_limit=TIME_LIMIT)

    driver.bot_turns_play(match_id=match.pk)

    match.refresh_from_db()
    assert (match.end_reason, match.forfeit_reason) == ("http_status", "HTTP 401")


# -- hostile HTTP bots --------------------------------------------------------------------


def sleep_past_deadline(handler, request) -> None:
    handler.server.release.wait(5)


def answer_illegal(handler, request) -> None:
    reply(handler, b'{"move": {"type": "pass"}}')


def answer_malformed_json(handler, request) -> None:
    reply(handler, b'{"move": {"type": "take"')


def answer_10_mib(handler, request) -> None:
    reply(handler, b'{"move": "' + b"x" * (10 * 1024 * 1024) + b'"}')


def answer_nested_30000_deep(handler, request) -> None:
    reply(handler, b'{"move": ' + b"[" * 30_000 + b"]" * 30_000 + b"}")


def answer_500(handler, request) -> None:
    reply(handler, b'{"error": "boom"}', status=500)


def redirect(handler, request) -> None:
    reply(handler, b"", status=302, Location="http://127.0.0.1:9/elsewhere")


def close_connection(handler, request) -> None:
    handler.close_connection = True
    handler.connection.shutdown(socket.SHUT_RDWR)


HOSTILE = [
    (sleep_past_deadline, "timeout"),
    (answer_illegal, "illegal_move"),
    (answer_malformed_json, "malformed_response"),
    (answer_nested_30000_deep, "malformed_response"),
    (answer_10_mib, "response_too_large"),
    (answer_500, "http_status"),
    (redirect, "redirect"),
    (close_connection, "connection_error"),
]


@pytest.mark.parametrize(
    ("behaviour", "reason"), HOSTILE, ids=[behaviour.__name__ for behaviour, _ in HOSTILE]
)
@pytest.mark.parametrize("game", ["durak", "volynshchik"])
def test_hostile_http_bot_forfeits_with_the_reason_recorded_on_the_match(
    user, builtin, http_bot, http_bot_record, behaviour, reason, game
):
    url, server = http_bot(behaviour)
    web = http_bot_record(url)
    players = [builtin["greedy"], web] + ([builtin["random"]] if game == "volynshchik" else [])
    match = new_match(user, players, game=game, time_limit=TIME_LIMIT)

    started = time.monotonic()
    driver.bot_turns_play(match_id=match.pk)
    took = time.monotonic() - started

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.end_reason == reason
    assert match.forfeit_seat == 1
    assert match.loser == 1
    assert match.result["loser"] == 1
    assert match.forfeit_reason
    assert match.seed_revealed
    assert took < TIME_LIMIT + SLACK
    # The bot was asked once: a fault is never retried.
    assert len(server.requests) == 1
    web.refresh_from_db()
    assert web.consecutive_failures == 1
    verification = match_verification(match)
    assert verification.ok, verification.problems


def test_forfeit_details_say_what_the_bot_did_wrong(user, builtin, http_bot, http_bot_record):
    details = {}
    for behaviour in (answer_illegal, answer_10_mib, answer_500, redirect):
        url, _server = http_bot(behaviour)
        web = http_bot_record(url, name=f"bad-{behaviour.__name__}".replace("_", "-"))
        match = new_match(user, [web, builtin["random"]], time_limit=TIME_LIMIT)
        driver.bot_turns_play(match_id=match.pk)
        match.refresh_from_db()
        details[behaviour.__name__] = match.forfeit_reason

    assert "{'type': 'pass'} is not one of the legal moves" in details["answer_illegal"]
    assert details["answer_10_mib"] == f"the answer is longer than {MAX_RESPONSE_BYTES} bytes"
    assert details["answer_500"] == "HTTP 500"
    assert details["redirect"].startswith("HTTP 302 to http://127.0.0.1:9/elsewhere")


def test_bot_is_unhealthy_after_consecutive_forfeits_and_a_good_move_heals_it(
    user, builtin, http_bot, http_bot_record, settings
):
    settings.BOTS_UNHEALTHY_AFTER = 3
    url, server = http_bot(answer_500)
    web = http_bot_record(url)

    for expected_failures in (1, 2, 3):
        match = new_match(user, [web, builtin["random"]], time_limit=TIME_LIMIT)
        driver.bot_turns_play(match_id=match.pk)
        web.refresh_from_db()
        assert web.consecutive_failures == expected_failures
        assert web.healthy is (expected_failures < 3)

    choose = load_strategy("greedy", seed=2)
    server.behaviour = lambda handler, request: reply(
        handler,
        json.dumps(
            {"move": choose(request["body"]["view"], request["body"]["legal_moves"])}
        ).encode(),
    )
    match = new_match(user, [web, builtin["random"]])
    play_until_seat_to_move(match, 0)
    driver.bot_turns_play(match_id=match.pk, max_moves=1)
    web.refresh_from_db()
    assert (web.healthy, web.consecutive_failures) == (True, 0)


# -- duplicate drivers and late workers --------------------------------------------------


def play_until_seat_to_move(match: Match, seat: int) -> None:
    """Let the built-in bots move until ``seat`` is to move (never asking that seat)."""
    match.refresh_from_db()
    while match.to_move != seat:
        assert driver.bot_turns_play(match_id=match.pk, max_moves=1) == 1
        match.refresh_from_db()


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


def test_match_is_let_go_when_the_driver_stops(user, user_factory, builtin):
    match = match_create(
        creator=user,
        game="durak",
        players=2,
        seats=[SeatHolder(bot=builtin["greedy"]), SeatHolder(user=user_factory())],
        move_time_limit=60,
    )
    match.refresh_from_db()
    if match.to_move == 1:  # The person opens: make their move, so that the bot's is next.
        state = match_state(match)
        match_move_submit(match_id=match.pk, seat=1, ply=0, move=state.legal_moves()[0])

    assert driver.bot_turns_play(match_id=match.pk) >= 1

    match.refresh_from_db()
    assert (match.status, match.to_move) == (Match.Status.ACTIVE, 1)
    assert not BotTurnLease.objects.filter(match_id=match.pk).exists()


def test_turn_sent_after_its_deadline_gives_the_bot_its_whole_time_and_counts_the_delay(
    user, builtin, http_bot, http_bot_record
):
    def first_legal_move(handler, request) -> None:
        reply(handler, json.dumps({"move": request["body"]["legal_moves"][0]}).encode())

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


def overdue(match: Match) -> None:
    """Put the match's deadline in the past, as when its driver died or its turn notice
    was lost with the broker."""
    Match.objects.filter(pk=match.pk).update(deadline_at=timezone.now() - timedelta(seconds=5))


def test_built_in_bots_resumed_after_their_deadline_play_on(user, builtin):
    match = new_match(user, [builtin["random"], builtin["greedy"]], time_limit=1)
    overdue(match)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)


def test_sweep_gives_an_overdue_built_in_turn_to_the_driver_instead_of_forfeiting(
    user, builtin, celery_eager, django_capture_on_commit_callbacks
):
    from games.clock import matches_overdue_forfeit

    match = new_match(user, [builtin["random"], builtin["greedy"]], time_limit=1)
    overdue(match)

    with django_capture_on_commit_callbacks(execute=True) as sent:
        forfeited = matches_overdue_forfeit()

    assert forfeited == [] and sent  # the turn, handed to the driver after commit
    assert_finished_by_the_rules(match)


def test_deadline_watch_gives_an_overdue_built_in_turn_to_the_driver_and_looks_again_later(
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

    assert len(notices) == 1  # the turn, handed to a driver once the check commits
    assert watches == [((match.pk,), match_tasks.ARENA_TURN_RECHECK + DEADLINE_GRACE)]
    match.refresh_from_db()
    assert (match.status, match.ply) == (Match.Status.ACTIVE, 0)


def test_sweep_leaves_an_overdue_http_bot_turn_to_the_driver_which_asks_the_bot(
    user, builtin, http_bot, http_bot_record, celery_eager, django_capture_on_commit_callbacks
):
    from games.clock import matches_overdue_forfeit

    url, server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=60)
    play_until_seat_to_move(match, 1)
    overdue(match)

    with django_capture_on_commit_callbacks(execute=True):
        assert matches_overdue_forfeit() == []

    # Not forfeited on time for the arena's lateness: the bot was asked, and its own fault
    # (an HTTP 500) is what it loses for.
    match.refresh_from_db()
    assert (match.end_reason, match.forfeit_seat) == ("http_status", 1)
    assert len(server.requests) == 1
    web.refresh_from_db()
    assert web.consecutive_failures == 1


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
    from games import play

    match = new_match(user, [builtin["random"], builtin["greedy"]])
    append = play.match_moves_append
    inner = []

    def start_again_then_append(*, match_id, ply, moves):
        # What a turn notice run eagerly in this thread would do while the driver plays (a
        # person's move's commit in development, with CELERY_TASK_ALWAYS_EAGER).
        with CaptureQueriesContext(connection) as queries:
            inner.append(driver.bot_turns_play(match_id=match_id))
        inner.append(len(queries.captured_queries))
        return append(match_id=match_id, ply=ply, moves=moves)

    monkeypatch.setattr(play, "match_moves_append", start_again_then_append)

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    assert inner and set(inner) == {0}


# -- one match's bot does not hold up another ---------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_sleeping_bot_does_not_hold_up_another_match(
    user, builtin, http_bot, http_bot_record, kit_http_bot, no_match_tasks
):
    sleepy_url, sleepy_server = http_bot(sleep_past_deadline)
    good_url, _good_server = kit_http_bot(SECRET, load_strategy("greedy", seed=3))
    sleepy = http_bot_record(sleepy_url, name="sleepy")
    good = http_bot_record(good_url, name="good")
    slow_match = new_match(user, [builtin["greedy"], sleepy], time_limit=3.0)
    fast_match = new_match(user, [good, builtin["greedy"]], time_limit=3.0)
    ended_at = {}

    def drive(match: Match) -> None:
        try:
            driver.bot_turns_play(match_id=match.pk)
            ended_at[match.pk] = time.monotonic()
        finally:
            connection.close()

    started = time.monotonic()
    slow = threading.Thread(target=drive, args=(slow_match,))
    slow.start()
    while not sleepy_server.requests and time.monotonic() - started < 5:
        time.sleep(0.01)
    assert sleepy_server.requests, "the sleepy bot was never asked"
    drive_started = time.monotonic()
    fast = threading.Thread(target=drive, args=(fast_match,))
    fast.start()
    fast.join(30)
    slow.join(30)

    slow_match.refresh_from_db()
    fast_match.refresh_from_db()
    assert slow_match.end_reason == "timeout"
    assert slow_match.forfeit_seat == 1
    assert_finished_by_the_rules(fast_match)
    # The good match finished while the sleepy bot was still being waited for.
    assert ended_at[fast_match.pk] < ended_at[slow_match.pk]
    assert ended_at[fast_match.pk] - drive_started < 3.0


def test_forfeit_shows_in_the_match_archive_and_replay(
    api_client, user, builtin, http_bot, http_bot_record
):
    url, _server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [web, builtin["random"]], time_limit=TIME_LIMIT)
    driver.bot_turns_play(match_id=match.pk)

    detail = api_client.get(f"/api/v1/matches/{match.pk}/").json()
    listed = api_client.get("/api/v1/matches/?bot=webbot&end_reason=http_status").json()
    replay = api_client.get(f"/api/v1/matches/{match.pk}/replay/").json()

    assert (detail["end_reason"], detail["forfeit_seat"], detail["loser"]) == ("http_status", 0, 0)
    assert detail["forfeit_reason"] == "HTTP 500"
    assert [m["id"] for m in listed["results"]] == [match.pk]
    assert replay["end_reason"] == "http_status"
    assert replay["complete"] is True


def test_arena_turn_whose_driver_died_is_handed_over_again_and_a_live_one_is_not(
    user, builtin, settings, monkeypatch
):
    from bots import tasks as bot_tasks

    settings.BOTS_TURN_ABANDONED_AFTER = 15.0
    dead, alive = (new_match(user, [builtin["random"], builtin["greedy"]]) for _ in range(2))
    long_ago = timezone.now() - timedelta(seconds=20)
    Match.objects.filter(pk__in=[dead.pk, alive.pk]).update(turn_started_at=long_ago)
    # The dead driver's claim lapsed; the live one's runs on.
    BotTurnLease.objects.create(match=dead, holder="dead", ply=0, expires_at=long_ago)
    BotTurnLease.objects.create(
        match=alive, holder="alive", ply=0, expires_at=timezone.now() + timedelta(seconds=5)
    )
    sent = []
    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *args: sent.append(args))

    assert bot_tasks.resume_abandoned_turns() == 1

    assert sent == [(dead.pk, 0)]


def test_call_that_waited_past_its_send_by_is_not_sent_but_queued_anew(
    user, builtin, http_bot, http_bot_record, monkeypatch
):
    from bots import calls, tasks

    url, server = http_bot(answer_500)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=5.0)
    play_until_seat_to_move(match, 1)
    queued = []
    monkeypatch.setattr(calls, "pool_enabled", lambda: True)
    monkeypatch.setattr(tasks.bot_call, "apply_async", lambda args, queue: queued.append(args[0]))
    driver.bot_turns_play(match_id=match.pk, pool=True)
    (call,) = queued

    late = calls.call_make({**call, "send_by": time.time() - 1})
    calls.answer_play(call, late)

    assert late == {"late": True} and server.requests == []
    assert len(queued) == 2 and queued[1]["queued_at"] == call["queued_at"]
    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE and match.forfeit_seat is None
