"""The clock counts the bot's own time only: a move's ``time_taken`` starts when the
built-in player began to decide or the HTTP bot's request was sent, never when its turn
started in the arena's queue; a built-in player never loses on time."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from bots import driver
from games.clock import matches_overdue_forfeit
from games.models import Match, Move
from tests.bots.arena_matches import new_match, play_until_seat_to_move
from tests.bots.conftest import first_legal_move


def test_built_in_move_played_after_a_long_queue_records_its_own_time_only(user, builtin):
    match = new_match(user, [builtin["random"], builtin["greedy"]], time_limit=5)
    # Its turn waited 40 s in the arena's queue, past its deadline.
    started = timezone.now() - timedelta(seconds=40)
    Match.objects.filter(pk=match.pk).update(
        turn_started_at=started, deadline_at=started + timedelta(seconds=5)
    )
    assert matches_overdue_forfeit() == []

    assert driver.bot_turns_play(match_id=match.pk, max_moves=1) == 1

    move = Move.objects.get(match=match, ply=0)
    assert move.time_taken < 1.0
    match.refresh_from_db()
    assert (match.status, match.forfeit_seat) == (Match.Status.ACTIVE, None)


def test_http_bot_move_records_its_time_from_the_request_sent(
    user, builtin, http_bot, http_bot_record
):
    url, _server = http_bot(first_legal_move)
    web = http_bot_record(url)
    match = new_match(user, [builtin["random"], web], time_limit=30)
    play_until_seat_to_move(match, 1)
    ply = Match.objects.get(pk=match.pk).ply
    Match.objects.filter(pk=match.pk).update(
        turn_started_at=timezone.now() - timedelta(seconds=40)
    )

    driver.bot_turns_play(match_id=match.pk, max_moves=1)

    move = Move.objects.get(match=match, ply=ply)
    assert move.sent_at is not None
    assert move.time_taken == (move.received_at - move.sent_at).total_seconds()
    assert move.time_taken < 5.0
