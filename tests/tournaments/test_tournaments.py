"""Tournaments end to end in one process: creation, rounds, crash safety, standings."""

import pytest

from games.models import Match
from tournaments.creation import TournamentError, tournament_create
from tournaments.models import RatedMatch, RatingChange, Tournament, TournamentMatch
from tournaments.ratings import ratings_recompute
from tournaments.selectors import tournament_standings
from tournaments.services import (
    inline_play,
    tournament_cancel,
    tournament_match_play,
    tournament_play_inline,
    tournament_start,
)

pytestmark = pytest.mark.django_db


def create(bots, **options):
    defaults = {
        "creator": None,
        "name": "test",
        "game": "durak",
        "players": 2,
        "games_per_pairing": 2,
        "move_time_limit": 5.0,
    }
    return tournament_create(bots=bots, **defaults | options)


def play_inline(tournament):
    """Play every match of the tournament in this process, round by round."""
    tournament_play_inline(tournament_id=tournament.pk)
    tournament.refresh_from_db()
    return tournament


def test_create_schedules_every_match_of_the_round_robin(bot_factory):
    bots = [bot_factory() for _ in range(4)]

    tournament = create(bots, games_per_pairing=4, format="double_round_robin")

    assert (tournament.matches_total, tournament.rounds_total) == (6 * 4 * 2, 4)
    assert tournament.status == Tournament.Status.DRAFT
    assert TournamentMatch.objects.filter(tournament=tournament).count() == 48
    assert list(tournament.entries.values_list("bot_id", flat=True)) == [b.pk for b in bots]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"games_per_pairing": 3}, "multiple of 2"),
        ({"players": 5}, "2 to 4 players"),
        ({"match_format": "fool", "game": "volynshchik", "players": 2}, "Durak only"),
        ({"duplicate": True, "match_format": "fool"}, "single deals"),
    ],
)
def test_impossible_tournaments_are_refused(bot_factory, options, message):
    bots = [bot_factory() for _ in range(5)]

    with pytest.raises(TournamentError, match=message):
        create(bots, **options)


def test_a_bot_that_does_not_play_the_game_is_refused(bot_factory):
    bots = [bot_factory(), bot_factory(games=["volynshchik"])]

    with pytest.raises(TournamentError, match="does not play durak"):
        create(bots)


def test_tournament_played_inline_finishes_every_match_once_and_rates_them(
    bot_factory, quiet_turns
):
    bots = [bot_factory("random"), bot_factory("greedy"), bot_factory("random")]
    tournament = create(bots, games_per_pairing=4)

    tournament = play_inline(tournament)

    assert tournament.status == Tournament.Status.FINISHED
    assert tournament.matches_done == tournament.matches_total == 12
    tms = TournamentMatch.objects.filter(tournament=tournament)
    assert set(tms.values_list("status", flat=True)) == {"finished"}
    assert Match.objects.filter(tournament_match__tournament=tournament).count() == 12
    assert RatedMatch.objects.count() == 12
    assert RatingChange.objects.count() == 24
    assert ratings_recompute().mismatches == []


def test_playing_a_match_again_changes_nothing(bot_factory, quiet_turns):
    tournament = play_inline(create([bot_factory(), bot_factory()]))
    tm = TournamentMatch.objects.filter(tournament=tournament).first()

    assert tournament_match_play(tournament_match_id=tm.pk) == "finished"

    tm.refresh_from_db()
    assert tm.attempts == 1
    assert RatedMatch.objects.count() == 2
    assert Match.objects.count() == 2


def test_a_match_interrupted_mid_play_resumes_from_its_move_log(
    bot_factory, quiet_turns, monkeypatch
):
    import bots.play_to_end

    tournament = create([bot_factory(), bot_factory()])
    tm = TournamentMatch.objects.filter(tournament=tournament).first()
    real = bots.play_to_end._play

    def dies_after_five_moves(match_id, **options):
        real(match_id, **{**options, "max_moves": 5})
        raise SystemExit("worker killed")  # the claim is let go, as when its lease lapses

    with inline_play():
        tournament_start(tournament_id=tournament.pk)
    monkeypatch.setattr(bots.play_to_end, "_play", dies_after_five_moves)
    with pytest.raises(SystemExit):
        tournament_match_play(tournament_match_id=tm.pk)
    tm.refresh_from_db()
    assert (tm.status, tm.attempts, tm.match.ply) == ("running", 1, 5)
    first_moves = list(tm.match.moves.order_by("ply").values_list("move", flat=True))

    monkeypatch.setattr(bots.play_to_end, "_play", real)
    with inline_play():
        assert tournament_match_play(tournament_match_id=tm.pk) == "finished"

    tm.refresh_from_db()
    # The start that resumed counts no attempt: the dead one let go of its claim here, and
    # a claim that lapses is counted by the driver (BOTS_TURN_MAX_LAPSES).
    assert tm.attempts == 1
    assert Match.objects.count() == 1
    moves = list(tm.match.moves.order_by("ply").values_list("move", flat=True))
    assert moves[:5] == first_moves
    assert RatedMatch.objects.filter(match=tm.match).count() == 1


def test_a_match_that_keeps_killing_its_worker_is_aborted_after_the_attempts(
    bot_factory, quiet_turns, settings
):
    tournament = create([bot_factory(), bot_factory()])
    with inline_play():
        tournament_start(tournament_id=tournament.pk)
    tm = TournamentMatch.objects.filter(tournament=tournament).first()
    # Three workers died playing it.
    TournamentMatch.objects.filter(pk=tm.pk).update(
        attempts=settings.TOURNAMENT_MAX_ATTEMPTS, status="running"
    )

    with inline_play():
        assert tournament_match_play(tournament_match_id=tm.pk) == "aborted"

    tm.refresh_from_db()
    assert "gave up" in tm.last_error and "no bot is at fault" in tm.last_error
    tournament.refresh_from_db()
    assert tournament.matches_done == 1


def test_rounds_are_played_in_order_through_celery(
    bot_factory, quiet_turns, celery_eager, django_capture_on_commit_callbacks
):
    bots = [bot_factory() for _ in range(3)]
    tournament = create(bots, games_per_pairing=4)

    with django_capture_on_commit_callbacks(execute=True):
        tournament_start(tournament_id=tournament.pk)

    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    assert tournament.matches_done == 12
    finished = TournamentMatch.objects.filter(tournament=tournament).order_by("finished_at")
    rounds = list(finished.values_list("round", flat=True))
    assert rounds == sorted(rounds)


def test_cancel_stops_the_tournament_and_aborts_unfinished_matches(bot_factory, quiet_turns):
    tournament = create([bot_factory(), bot_factory(), bot_factory()])
    with inline_play():
        tournament_start(tournament_id=tournament.pk)
        first = TournamentMatch.objects.filter(tournament=tournament).order_by("index")[0]
        tournament_match_play(tournament_match_id=first.pk)

    tournament_cancel(tournament_id=tournament.pk)

    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.CANCELLED
    statuses = list(
        TournamentMatch.objects.filter(tournament=tournament).values_list("status", flat=True)
    )
    assert statuses.count("finished") == 1 and statuses.count("cancelled") == 5
    later = TournamentMatch.objects.filter(tournament=tournament, status="cancelled").first()
    assert tournament_match_play(tournament_match_id=later.pk) == "cancelled"
    assert Match.objects.count() == 1


def test_duplicate_tournament_deals_each_deck_to_every_seat(bot_factory, quiet_turns):
    bots = [bot_factory() for _ in range(3)]
    tournament = play_inline(create(bots, games_per_pairing=4, duplicate=True, rated=True))

    decks = {}
    for tm in TournamentMatch.objects.filter(tournament=tournament).select_related("match"):
        assert tm.match.rated
        decks.setdefault(tm.deck, set()).add(tm.match.seed)
        for seat, bot_id in enumerate(tm.table):
            decks.setdefault((tm.pairing, tm.deck, bot_id), set()).add(seat)
    assert len(decks[0]) == len(decks[1]) == 1 and decks[0] != decks[1]
    assert all(seats == {0, 1} for key, seats in decks.items() if isinstance(key, tuple))
    # Each round is a deal group, unsealed once the round ended: no commitment repeats.
    matches = Match.objects.filter(tournament_match__tournament=tournament)
    assert matches.values("deal_group").distinct().count() == 2
    assert matches.values("seed_commitment").distinct().count() == matches.count()
    assert not matches.filter(sealed=True).exists()

    standings = tournament_standings(tournament)
    assert set(standings.decks) == {0, 1}
    # Each deck is played by 3 pairings x 2 rotations, one point a match.
    assert all(sum(scores.values()) == 6 for scores in standings.decks.values())


def test_a_cancelled_duplicate_tournament_unseals_its_round_in_play(bot_factory, quiet_turns):
    from bots.play_to_end import match_play_to_end
    from tournaments.services import _tournament_game_create, tournament_cancel

    tournament = create([bot_factory() for _ in range(2)], duplicate=True)
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.RUNNING)
    first_tm, second_tm = TournamentMatch.objects.filter(tournament=tournament, round=0)
    first = _tournament_game_create(tournament, first_tm)
    TournamentMatch.objects.filter(pk=first_tm.pk).update(match=first)
    match_play_to_end(match_id=first.pk)
    second = _tournament_game_create(tournament, second_tm)
    TournamentMatch.objects.filter(pk=second_tm.pk).update(match=second)
    first.refresh_from_db()
    assert first.status == Match.Status.FINISHED and first.sealed and second.sealed

    tournament_cancel(tournament_id=tournament.pk)

    first.refresh_from_db()
    second.refresh_from_db()
    assert second.status == Match.Status.ABORTED
    assert not first.sealed and not second.sealed


def test_standings_add_up_from_the_crosstable(bot_factory, quiet_turns):
    bots = [bot_factory() for _ in range(3)]
    tournament = play_inline(create(bots, players=3, games_per_pairing=3))

    standings = tournament_standings(tournament)

    assert sum(line.games for line in standings.lines) == 9
    for line in standings.lines:
        row = standings.crosstable[line.bot_id]
        assert line.points == sum(score for score, _ in row.values())
        assert all(games == 3 for _, games in row.values())
    points = [line.points for line in standings.lines]
    assert points == sorted(points, reverse=True)
    # A 3-player match hands out 3 points: 2 to each beat loser... 1 + 1 + 0.5 + 0.5.
    assert sum(points) == pytest.approx(3 * sum(1 for _ in range(3)))


def test_a_match_that_cannot_be_created_is_aborted_and_the_round_goes_on(
    bot_factory, quiet_turns
):
    a, b = bot_factory(), bot_factory()
    tournament = create([a, b])
    with inline_play():
        tournament_start(tournament_id=tournament.pk)
        type(a).objects.filter(pk=a.pk).update(enabled=False)
        first, second = TournamentMatch.objects.filter(tournament=tournament).order_by("index")

        assert tournament_match_play(tournament_match_id=first.pk) == "aborted"
        assert tournament_match_play(tournament_match_id=second.pk) == "aborted"

    first.refresh_from_db()
    assert "not created" in first.last_error and "disabled" in first.last_error
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
