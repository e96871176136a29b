"""The ladder: tables of close ratings, fewest games first, no two bots of one owner."""

import pytest
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask

from games.models import Match
from tournaments.ladder import choose_table, ladder_forfeits_check, ladder_tick
from tournaments.models import LadderMatch, LadderPause, RatedMatch, Rating

pytestmark = pytest.mark.django_db


@pytest.fixture
def quiet_turns(monkeypatch):
    import bots.tasks

    monkeypatch.setattr(bots.tasks.match_turn_started, "delay", lambda match_id, ply: None)


@pytest.fixture
def only_durak_2p(settings, db):
    """Fill only 2-player Durak tables, from the bots the test makes."""
    from bots.models import Bot

    settings.LADDER_TABLES = [["durak", 2]]
    Bot.objects.update(enabled=False)


def test_table_starts_from_the_bot_with_fewest_games_and_adds_the_closest_rating(
    bot_factory, user
):
    a, b, c, d = (bot_factory(kind="http", url="http://127.0.0.1:1/") for _ in range(4))

    table = choose_table([(a, 1500, 10), (b, 1400, 2), (c, 1420, 5), (d, 1700, 0)], 2)

    # d has the fewest games; a (1500) is closest to its 1700.
    assert table == [d, a]
    assert choose_table([(a, 1500, 10), (b, 1400, 2), (c, 1420, 5)], 2) == [b, c]


def test_two_bots_of_one_owner_never_share_a_table(bot_factory, user):
    a = bot_factory(owner=user, kind="http", url="http://127.0.0.1:1/")
    b = bot_factory(owner=user, kind="http", url="http://127.0.0.1:1/")
    c = bot_factory(kind="http", url="http://127.0.0.1:1/")

    assert choose_table([(a, 1500, 0), (b, 1500, 1), (c, 1900, 5)], 2) == [a, c]
    assert choose_table([(a, 1500, 0), (b, 1500, 1)], 2) is None


def test_built_in_bots_of_the_arena_may_meet(bot_factory, user):
    a, b = bot_factory(owner=user), bot_factory(owner=user)

    assert choose_table([(a, 1500, 0), (b, 1500, 0)], 2) == [a, b]


def test_tick_starts_rated_matches_that_play_to_the_end_and_rate(
    bot_factory, only_durak_2p, quiet_turns, celery_eager, django_capture_on_commit_callbacks,
    settings,
):  # fmt: skip
    settings.LADDER_TABLES_PER_TICK = 2
    Match.objects.all().delete()
    bots = [bot_factory() for _ in range(4)]

    with django_capture_on_commit_callbacks(execute=True):
        created = ladder_tick()

    assert len(created) == 2
    matches = Match.objects.filter(pk__in=created)
    assert all(m.rated and m.status == Match.Status.FINISHED for m in matches)
    assert LadderMatch.objects.count() == 2
    assert RatedMatch.objects.filter(match__in=matches).count() == 2
    # The first table took the two bots with fewest games; the second, the other two.
    seated = {s.bot_id for m in matches for s in m.seats.all()}
    assert seated == {bot.pk for bot in bots}
    assert Rating.objects.filter(pool="durak-2p").count() == 4


def test_tick_skips_disabled_unhealthy_and_paused_bots(bot_factory, only_durak_2p, quiet_turns):
    bot_factory(enabled=False)
    bot_factory(healthy=False)
    paused = bot_factory()
    LadderPause.objects.create(bot=paused, reason="test")
    bot_factory()

    assert ladder_tick() == []


def test_tick_stops_at_the_limit_of_unfinished_ladder_matches(
    bot_factory, only_durak_2p, quiet_turns, settings
):
    settings.LADDER_MAX_ACTIVE = 1
    for _ in range(4):
        bot_factory()

    assert len(ladder_tick(tables_per_pool=3)) == 1
    assert ladder_tick() == []


def test_a_bot_that_forfeits_its_last_matches_is_paused(bot_factory, finished_match, settings):
    settings.LADDER_PAUSE_AFTER_FORFEITS = 3
    quitter, other = bot_factory(), bot_factory()
    finished_match([quitter, other], loser=1)
    matches = [finished_match([quitter, other], loser=0, forfeit_seat=0) for _ in range(2)]

    assert ladder_forfeits_check(match_id=matches[-1].pk) is None

    third = finished_match([other, quitter], loser=1, forfeit_seat=1)
    pause = ladder_forfeits_check(match_id=third.pk)

    assert pause.bot == quitter
    assert ladder_forfeits_check(match_id=third.pk) == pause


def test_the_ladder_tick_is_a_beat_schedule_editable_in_the_admin():
    task = PeriodicTask.objects.get(task="tournaments.tasks.ladder_tick")

    assert task.interval.every == 30
    assert PeriodicTask.objects.filter(task="tournaments.tasks.tournaments_watchdog").exists()


def test_recompute_ratings_command_reports_and_fails_on_a_difference(
    bot_factory, finished_match, capsys
):
    from django.core.management.base import CommandError

    from tournaments.ratings import ratings_apply_pending

    a, b = bot_factory(), bot_factory()
    finished_match([a, b], loser=0)
    ratings_apply_pending()

    call_command("recompute_ratings", "--fit")
    assert "Replayed 1 rated matches" in capsys.readouterr().out

    Rating.objects.filter(bot=a).update(elo=1234)
    with pytest.raises(CommandError, match="differ"):
        call_command("recompute_ratings")
    call_command("recompute_ratings", "--fix")
    call_command("recompute_ratings")


def test_tournament_command_plays_in_process_and_prints_standings_and_ratings(
    bot_factory, capsys, quiet_turns
):
    bot_factory("random", name="cmd-random")
    bot_factory("greedy", name="cmd-greedy")

    call_command(
        "tournament", "--game", "durak", "--players", "2", "--bots", "cmd-random,cmd-greedy",
        "--games", "4", "--duplicate", "--inline",
    )  # fmt: skip

    out = capsys.readouterr().out
    assert "4/4" in out
    assert "Finished: 4 matches" in out
    assert "Standings" in out and "cmd-greedy" in out
    assert "95% bootstrap interval" in out


def test_a_ladder_match_that_keeps_killing_its_worker_is_aborted(
    bot_factory, only_durak_2p, quiet_turns, settings
):
    from tournaments.ladder import ladder_match_play

    bot_factory(), bot_factory()
    (match_id,) = ladder_tick()
    LadderMatch.objects.filter(match_id=match_id).update(
        attempts=settings.TOURNAMENT_MAX_ATTEMPTS
    )

    assert ladder_match_play(match_id=match_id) == Match.Status.ABORTED
    assert not RatedMatch.objects.exists()
