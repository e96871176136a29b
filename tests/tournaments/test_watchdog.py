"""The tournament watchdog acts on evidence, never on the time since a match's last move:
a match waiting in a queue is left to wait and costs no attempt; a match whose game ended
unrecorded is recorded; a game the arena gave up is recorded with what failed."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from bots import driver
from bots.models import BotTurnLease
from games.models import Match
from tournaments.creation import tournament_create
from tournaments.dispatch import inline_play
from tournaments.models import Tournament, TournamentMatch
from tournaments.services import tournament_match_play, tournament_start, tournaments_watchdog


def started_match(bot_factory, monkeypatch) -> TournamentMatch:
    """A running tournament match whose game exists and has made no move: its task
    created it, then handed its turns to the queue (nothing is played here)."""
    import bots.play_to_end

    tournament = tournament_create(
        creator=None, name="t", game="durak", players=2,
        bots=[bot_factory(), bot_factory()], games_per_pairing=2,
    )  # fmt: skip
    with inline_play():
        tournament_start(tournament_id=tournament.pk)
    tm = TournamentMatch.objects.filter(tournament=tournament).order_by("index").first()
    monkeypatch.setattr(bots.play_to_end, "_play", lambda match_id, **options: driver.Driver("x"))
    with inline_play():
        assert tournament_match_play(tournament_match_id=tm.pk) == "running"
    monkeypatch.undo()
    tm.refresh_from_db()
    return tm


def test_match_queued_for_ten_minutes_is_not_sent_again_nor_counted(
    bot_factory, quiet_turns, monkeypatch
):
    tm = started_match(bot_factory, monkeypatch)
    long_ago = timezone.now() - timedelta(minutes=10)
    Match.objects.filter(pk=tm.match_id).update(turn_started_at=long_ago)
    TournamentMatch.objects.filter(pk=tm.pk).update(updated_at=long_ago)
    sent = []
    monkeypatch.setattr("tournaments.services.send_round", sent.extend)

    assert tournaments_watchdog() == []

    assert sent == []
    tm.refresh_from_db()
    assert (tm.status, tm.attempts) == ("running", 1)


def test_match_sent_twice_while_queued_costs_no_attempt(bot_factory, quiet_turns, monkeypatch):
    tm = started_match(bot_factory, monkeypatch)

    with inline_play():
        assert tournament_match_play(tournament_match_id=tm.pk) == "finished"

    tm.refresh_from_db()
    assert (tm.status, tm.attempts) == ("finished", 1)


def test_match_whose_game_ended_unrecorded_is_recorded_by_the_watchdog(
    bot_factory, quiet_turns, monkeypatch
):
    # Its task died; a driver handed the turn for its lapsed claim played it to the end.
    tm = started_match(bot_factory, monkeypatch)
    driver.bot_turns_play(match_id=tm.match_id)

    assert tournaments_watchdog() == [tm.pk]

    tm.refresh_from_db()
    assert tm.status == "finished"
    assert Tournament.objects.get(pk=tm.tournament_id).matches_done == 1


def test_game_the_arena_gave_up_is_recorded_aborted_with_what_failed(
    bot_factory, quiet_turns, monkeypatch, settings
):
    settings.BOTS_TURN_MAX_LAPSES = 1
    tm = started_match(bot_factory, monkeypatch)
    lapsed = timezone.now() - timedelta(seconds=1)
    BotTurnLease.objects.create(match_id=tm.match_id, holder="dead", ply=0, expires_at=lapsed)
    # A second worker took over the first lapsed claim at ply 0 and died too.
    BotTurnLease.objects.filter(match_id=tm.match_id).update(lapses=1)

    driver.bot_turns_play(match_id=tm.match_id)
    assert tournaments_watchdog() == [tm.pk]

    tm.refresh_from_db()
    assert tm.status == "aborted"
    assert "worker playing its turn stopped renewing its claim at ply 0" in tm.last_error
    assert "no bot is at fault" in tm.last_error
    game = Match.objects.get(pk=tm.match_id)
    assert (game.status, game.forfeit_seat, game.loser) == ("aborted", None, None)
