"""HTTP bots' turns: a correct bot plays whole matches signed, every hostile bot ends in a
forfeit recorded on its match within the time limit, forfeits cost a bot its health, and a
sleeping bot holds up no other match."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import connection

from bots import driver
from cardkit.protocol import MAX_RESPONSE_BYTES, verify_headers
from cardkit.serve import load_strategy
from games.models import Match, Move
from games.verification import match_verification
from tests.bots.arena_matches import (
    SLACK,
    TIME_LIMIT,
    assert_finished_by_the_rules,
    new_match,
    play_until_seat_to_move,
)
from tests.bots.conftest import (
    SECRET,
    answer_10_mib,
    answer_500,
    close_connection,
    reply,
    sleep_past_deadline,
)

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
        verify_headers(SECRET, handler.headers, request["raw"])
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


# -- hostile HTTP bots (and the behaviours of tests/bots/conftest.py) ---------------------


def answer_illegal(handler, request) -> None:
    reply(handler, b'{"move": {"type": "pass"}}')


def answer_malformed_json(handler, request) -> None:
    reply(handler, b'{"move": {"type": "take"')


def answer_nested_30000_deep(handler, request) -> None:
    reply(handler, b'{"move": ' + b"[" * 30_000 + b"]" * 30_000 + b"}")


def redirect(handler, request) -> None:
    reply(handler, b"", status=302, Location="http://127.0.0.1:9/elsewhere")


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
        # None of these bots is slow, so a roomy limit costs nothing; at TIME_LIMIT a
        # loaded machine sent the 10 MiB answer's first bytes late (a timeout, not this).
        match = new_match(user, [web, builtin["random"]], time_limit=5)
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
