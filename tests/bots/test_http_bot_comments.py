"""An HTTP bot's comment on its move: stored with the move, cut to 1 KB rather than
forfeited for, shown to its owner at once and to everyone else once the match is over."""

from __future__ import annotations

import json

import pytest

from bots import driver
from bots.selectors import bot_call_log
from cardkit.protocol import MAX_COMMENT_BYTES
from games.models import Match, Move
from tests.bots.arena_matches import assert_finished_by_the_rules, new_match
from tests.bots.conftest import SECRET, reply

pytestmark = pytest.mark.django_db


def commenting(comment_of):
    """A scripted bot playing the first legal move with ``comment_of(request)`` as comment."""

    def behaviour(handler, request):
        body = request["body"]
        answer = {"move": body["legal_moves"][0], "comment": comment_of(body)}
        reply(handler, json.dumps(answer).encode())

    return behaviour


def first_move_of_seat_0(match: Match) -> Move:
    """Let the match's bots move one at a time until seat 0 has moved; return its move."""
    while not Move.objects.filter(match=match, seat=0).exists():
        assert driver.bot_turns_play(match_id=match.pk, max_moves=1) == 1
    return Move.objects.get(match=match, seat=0)


def test_an_http_bots_comment_through_the_kits_server_is_stored_with_each_move(
    user, builtin, kit_http_bot, http_bot_record
):
    def choose(view, legal_moves):
        return {"move": legal_moves[-1], "comment": f"{len(legal_moves)} choices, took the last"}

    url, _server = kit_http_bot(SECRET, choose)
    bot = http_bot_record(url)
    match = new_match(user, [bot, builtin["greedy"]])

    driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    mine = list(Move.objects.filter(match=match, seat=0).order_by("ply"))
    theirs = Move.objects.filter(match=match, seat=1)
    assert mine and all(m.comment.endswith(" choices, took the last") for m in mine)
    assert not any(m.comment for m in theirs)


def test_a_comment_over_1024_bytes_is_cut_at_a_character_and_the_move_still_played(
    user, builtin, http_bot, http_bot_record
):
    # "é" is two bytes: 600 of them are 1200 bytes, and 1024 bytes end between two.
    url, _server = http_bot(commenting(lambda body: "é" * 600))
    bot = http_bot_record(url)
    match = new_match(user, [bot, builtin["greedy"]])

    move = first_move_of_seat_0(match)

    assert move.comment == "é" * (MAX_COMMENT_BYTES // 2)
    match.refresh_from_db()
    assert (match.status, match.forfeit_seat) == (Match.Status.ACTIVE, None)


@pytest.mark.parametrize("comment", [42, ["why"], {"text": "why"}, None, "nul\x00byte"])
def test_a_comment_that_is_not_storable_text_never_forfeits_the_move(
    user, builtin, http_bot, http_bot_record, comment
):
    url, _server = http_bot(commenting(lambda body: comment))
    bot = http_bot_record(url)
    match = new_match(user, [bot, builtin["greedy"]])

    move = first_move_of_seat_0(match)

    assert move.comment == ("nulbyte" if isinstance(comment, str) else "")
    match.refresh_from_db()
    assert match.forfeit_seat is None


def test_the_owner_reads_the_comment_at_once_while_the_replay_hides_it_until_the_end(
    user, builtin, http_bot, http_bot_record, client
):
    url, _server = http_bot(commenting(lambda body: f"ply {body['view']['ply']}: first legal"))
    bot = http_bot_record(url)
    match = new_match(user, [bot, builtin["greedy"]])
    ply = first_move_of_seat_0(match).ply
    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE

    log = bot_call_log(bot=bot, match_id=match.pk)
    active_replay = client.get(f"/api/v1/matches/{match.pk}/replay/").json()

    assert log[0]["comment"] == f"ply {ply}: first legal"
    assert [step["comment"] for step in active_replay["steps"]] == [None] * (match.ply + 1)
    assert "first legal" not in json.dumps(active_replay)

    driver.bot_turns_play(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    steps = client.get(f"/api/v1/matches/{match.pk}/replay/").json()["steps"]
    mine = [step for step in steps if step["seat"] == 0]
    assert mine and all(s["comment"].endswith(": first legal") for s in mine)
    assert all(step["comment"] is None for step in steps if step["seat"] != 0)


@pytest.mark.django_db(transaction=True)
def test_the_kits_client_runner_posts_each_comment_cut_to_the_limit(
    live_server, user, celery_eager
):
    from cardkit.client import ClientBot
    from tests.bots.test_client_runner import assert_played_to_the_end, seat_client_bot

    token, (match,) = seat_client_bot(user, "durak", 2)

    def choose(view, legal_moves):
        # Over the limit: the API would refuse it, so the runner cuts it, as the arena
        # cuts an HTTP bot's, rather than lose the turn.
        return {"move": legal_moves[0], "comment": f"ply {view['ply']} " + "é" * 600}

    runner = ClientBot(live_server.url, token, choose)
    runner.name = "clienty"
    runner.play_match(match.pk)
    runner.stop()

    assert_played_to_the_end(match)
    mine = list(Move.objects.filter(match=match, seat=0).order_by("ply"))
    for move in mine:
        assert move.comment.startswith(f"ply {move.ply} é")
        assert len(move.comment.encode()) in (MAX_COMMENT_BYTES - 1, MAX_COMMENT_BYTES)
