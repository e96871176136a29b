"""The ladder: duplicate tables chosen by information, no two bots of one owner."""

import pytest
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask

from games.models import Match
from tournaments.ladder import ladder_forfeits_check, ladder_match_play, ladder_plan, ladder_tick
from tournaments.models import LadderMatch, LadderPause, RatedMatch, Rating

pytestmark = pytest.mark.django_db


@pytest.fixture
def only_durak_2p(settings, db):
    """Fill only 2-player Durak tables, from the bots the test makes."""
    from bots.models import Bot

    settings.LADDER_TABLES = [["durak", 2]]
    Bot.objects.update(enabled=False)


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
    # Each table is two deals (one per seat rotation), all finished and rated.
    matches = Match.objects.filter(ladder_entry__isnull=False)
    assert matches.count() == 4
    assert all(m.rated and m.status == Match.Status.FINISHED for m in matches)
    assert RatedMatch.objects.filter(match__in=matches).count() == 4
    # The first table took two bots never rated; the second, the other two.
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


def test_a_ladder_pause_mails_the_bots_owner_once_after_commit(
    bot_factory, finished_match, settings, django_capture_on_commit_callbacks
):
    from django.core import mail

    from cardserver.celery import eager_tasks

    settings.LADDER_PAUSE_AFTER_FORFEITS = 1
    quitter, other = bot_factory(), bot_factory()
    quitter.owner.email = "owner@example.org"
    quitter.owner.save()
    match = finished_match([quitter, other], loser=0, forfeit_seat=0)

    with eager_tasks(), django_capture_on_commit_callbacks(execute=True):
        ladder_forfeits_check(match_id=match.pk)
        ladder_forfeits_check(match_id=match.pk)

    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["owner@example.org"]
    assert "off the ladder: forfeited its last 1 rated matches" in mail.outbox[0].body


def test_the_ladder_tick_is_a_beat_schedule_editable_in_the_admin():
    task = PeriodicTask.objects.get(task="tournaments.tasks.ladder_tick")

    assert task.interval.every == 30
    assert PeriodicTask.objects.filter(task="tournaments.tasks.tournaments_watchdog").exists()


def test_a_ladder_tick_still_queued_when_the_next_is_due_expires():
    call_command("ladder", "on", "--every", "5")

    task = PeriodicTask.objects.get(task="tournaments.tasks.ladder_tick")
    assert (task.interval.every, task.expire_seconds) == (5, 5)


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

    out, err = capsys.readouterr()
    assert "4/4" in err  # the progress bar, printed once at the end when not on a terminal
    assert "Finished: 4 matches" in out
    assert "Standings" in out and "cmd-greedy" in out
    assert "95% bootstrap interval" in out


def test_a_ladder_match_that_keeps_killing_its_worker_is_aborted(
    bot_factory, only_durak_2p, quiet_turns, settings
):
    bot_factory(), bot_factory()
    (match_id,) = ladder_tick()
    LadderMatch.objects.filter(match_id=match_id).update(
        attempts=settings.TOURNAMENT_MAX_ATTEMPTS
    )

    assert ladder_match_play(match_id=match_id) == Match.Status.ABORTED
    assert not RatedMatch.objects.exists()


@pytest.mark.parametrize("players", [2, 3])
def test_a_ladder_table_deals_one_deck_in_every_seat_rotation(
    bot_factory, quiet_turns, settings, players, celery_eager, django_capture_on_commit_callbacks
):
    from bots.models import Bot

    settings.LADDER_TABLES = [["volynshchik", players]]
    Bot.objects.update(enabled=False)
    bots = {bot.pk for bot in (bot_factory() for _ in range(players))}
    with django_capture_on_commit_callbacks(execute=True):
        (first,) = ladder_tick(seed=1)

    deals = list(LadderMatch.objects.filter(table=first).order_by("rotation"))
    assert [d.rotation for d in deals] == list(range(players))
    assert {d.pool for d in deals} == {f"volynshchik-{players}p"}
    seats = [
        list(d.match.seats.order_by("index").values_list("bot_id", flat=True)) for d in deals
    ]
    assert all(set(order) == bots for order in seats)
    for seat in range(players):
        assert {order[seat] for order in seats} == bots
    assert all(order == seats[0][r:] + seats[0][:r] for r, order in enumerate(seats))
    # One deck for the table: every deal is deck 0 of the table's deal group, each with a
    # commitment of its own; the group unsealed when its last deal ended.
    assert len({d.match.seed for d in deals}) == 1
    assert len({d.match.deal_group_id for d in deals}) == 1
    assert len({d.match.seed_commitment for d in deals}) == players
    assert not any(d.match.sealed for d in deals)
    assert deals[0].match.deal_group.unsealed_at is not None
    assert RatedMatch.objects.filter(match__in=[d.match for d in deals]).count() == players
    # Playing the table again deals nothing new.
    assert ladder_match_play(match_id=first) == Match.Status.FINISHED
    assert LadderMatch.objects.filter(table=first).count() == players


def test_a_seeded_tick_chooses_the_same_tables(bot_factory, finished_match, only_durak_2p):
    import random

    from tournaments.ratings import ratings_apply_pending, ratings_fit

    bots = [bot_factory() for _ in range(6)]
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            finished_match([a, b], loser=1)
    ratings_apply_pending()
    ratings_fit(pool="durak-2p", bootstraps=20)

    def plan(seed):
        tables = ladder_plan(rng=random.Random(seed), tables_per_pool=3)
        return [[bot.pk for bot in table] for _, _, table in tables]

    assert plan(5) == plan(5)
    assert len(plan(5)) == 3
    # The choice is drawn: other seeds choose other tables.
    assert len({str(plan(seed)) for seed in range(10)}) > 1


def test_a_tick_never_seats_two_bots_of_one_owner(bot_factory, only_durak_2p, user_factory):
    import random

    alice, bob = user_factory(), user_factory()
    for owner in (alice, alice, alice, bob):
        bot_factory(owner=owner, kind="http", url="http://127.0.0.1:1/")

    for seed in range(20):
        tables = ladder_plan(rng=random.Random(seed), tables_per_pool=2)
        assert len(tables) == 1
        (_, _, table), = tables
        assert {bot.owner_id for bot in table} == {alice.pk, bob.pk}


def test_the_plan_tells_the_pairing_each_bots_neighbour_in_the_fit(
    bot_factory, finished_match, only_durak_2p, monkeypatch
):
    import random

    from tournaments import ladder
    from tournaments.models import FitEntry
    from tournaments.ratings import ratings_apply_pending, ratings_fit

    bots = [bot_factory() for _ in range(4)]
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            finished_match([a, b], loser=1)
    ratings_apply_pending()
    fit = ratings_fit(pool="durak-2p", bootstraps=20)
    told = []
    choose = ladder.informative_table
    monkeypatch.setattr(
        ladder, "informative_table", lambda c, *a, **k: told.extend(c) or choose(c, *a, **k)
    )

    ladder_plan(rng=random.Random(1))

    lines = list(FitEntry.objects.filter(fit=fit).order_by("rank"))
    expected = {
        line.bot_id: (line.los, below.bot_id if below else None)
        for line, below in zip(lines, [*lines[1:], None], strict=True)
    }
    assert {c.key: (c.los, c.below) for c in told} == expected


def test_the_plans_reads_do_not_grow_with_its_tables(
    bot_factory, finished_match, only_durak_2p, settings
):
    import random

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tournaments.ratings import ratings_apply_pending, ratings_fit

    settings.LADDER_TABLES = [["durak", 2], ["durak", 3]]
    bots = [bot_factory() for _ in range(15)]
    for a, b in zip(bots, bots[1:], strict=False):
        finished_match([a, b], loser=1)
    ratings_apply_pending()
    ratings_fit(pool="durak-2p", bootstraps=0)

    def reads(tables):
        with CaptureQueriesContext(connection) as queries:
            planned = ladder_plan(rng=random.Random(1), tables_per_pool=tables)
        return len(planned), len(queries)

    one, many = reads(1), reads(3)
    assert (one[0], many[0]) == (2, 6)
    assert one[1] == many[1]


@pytest.fixture
def durak_3p(settings, db):
    from bots.models import Bot

    settings.LADDER_TABLES = [["durak", 3]]
    Bot.objects.update(enabled=False)


def test_each_deal_of_a_table_is_a_task_of_its_own(
    bot_factory, durak_3p, quiet_turns, django_capture_on_commit_callbacks, monkeypatch
):
    from tournaments.tasks import play_ladder_match

    for _ in range(3):
        bot_factory()
    (first,) = ladder_tick(seed=1)
    sent = []
    monkeypatch.setattr(play_ladder_match, "delay", sent.append)

    with django_capture_on_commit_callbacks(execute=True):
        assert ladder_match_play(match_id=first) == Match.Status.FINISHED

    deals = list(LadderMatch.objects.filter(table=first).order_by("rotation"))
    # The second deal is dealt, not played: its own task, sent after commit, plays it.
    assert [(d.match.status, d.match.ply > 0) for d in deals] == [
        (Match.Status.FINISHED, True), (Match.Status.ACTIVE, False)
    ]  # fmt: skip
    assert sent == [deals[1].match_id]


def test_a_deal_recorded_after_the_io_pool_finished_it_deals_the_next_rotation(
    bot_factory, durak_3p, quiet_turns
):
    from bots.play_to_end import match_play_to_end
    from tournaments.ladder import ladder_match_record

    for _ in range(3):
        bot_factory()
    (first,) = ladder_tick(seed=1)
    # As the I/O pool does for HTTP bots: the deal ends outside the deal's task.
    match_play_to_end(match_id=first)

    ladder_match_record(match_id=first)
    ladder_match_record(match_id=first)

    rotations = LadderMatch.objects.filter(table=first).values_list("rotation", flat=True)
    assert sorted(rotations) == [0, 1]


def test_a_failed_deal_task_is_sent_again_and_its_table_goes_on(
    bot_factory, durak_3p, quiet_turns, celery_eager, django_capture_on_commit_callbacks,
    monkeypatch,
):  # fmt: skip
    from celery.exceptions import Retry

    from tournaments import ladder
    from tournaments.tasks import play_ladder_match

    for _ in range(3):
        bot_factory()
    play, failed = ladder.match_play_to_end, []

    def fail_the_second_deal_once(*, match_id, **options):
        if LadderMatch.objects.get(match_id=match_id).rotation == 1 and not failed:
            failed.append(match_id)
            raise RuntimeError("the worker lost its database")
        return play(match_id=match_id, **options)

    monkeypatch.setattr(ladder, "match_play_to_end", fail_the_second_deal_once)
    with pytest.raises(Retry), django_capture_on_commit_callbacks(execute=True):
        (first,) = ladder_tick(seed=1)
    # The broker delivers the task again.
    with django_capture_on_commit_callbacks(execute=True):
        play_ladder_match.delay(failed[0])

    deals = LadderMatch.objects.filter(table=first).order_by("rotation")
    assert [d.match.status for d in deals] == [Match.Status.FINISHED] * 3
    assert RatedMatch.objects.filter(match__ladder_entry__table=first).count() == 3


def test_no_table_shape_starves_when_bots_are_short(bot_factory, settings, db):
    """Six bots fill a 2- and a 3-player table, or one 5-player table; ticks that always
    began with the first shapes of LADDER_TABLES never dealt the larger ones."""
    import random

    from bots.models import Bot

    Bot.objects.update(enabled=False)
    settings.LADDER_TABLES = [["durak", 2], ["durak", 3], ["durak", 4], ["volynshchik", 5]]
    for _ in range(6):
        bot_factory()

    shapes = set()
    for seed in range(40):
        shapes.update((game, players) for game, players, _ in ladder_plan(rng=random.Random(seed)))

    assert shapes == {("durak", 2), ("durak", 3), ("durak", 4), ("volynshchik", 5)}


def test_the_tick_deals_on_a_table_whose_record_was_lost(bot_factory, durak_3p, quiet_turns):
    from bots.play_to_end import match_play_to_end

    for _ in range(3):
        bot_factory()
    (first,) = ladder_tick(seed=1)
    # The deal ends on the I/O pool, and its record task never runs.
    match_play_to_end(match_id=first)

    assert ladder_tick(seed=2) == []  # its bots are at the table's next deal

    rotations = LadderMatch.objects.filter(table=first).values_list("rotation", flat=True)
    assert sorted(rotations) == [0, 1]
    assert RatedMatch.objects.filter(match_id=first).exists()


def test_a_tables_bots_stay_busy_between_its_deals(bot_factory, only_durak_2p, quiet_turns):
    """From a deal's end to the commit of the table's next rotation (dealt by another
    task), a tick must not seat the table's bots at a second table."""
    import random

    from bots.play_to_end import match_play_to_end

    bot_factory(), bot_factory()
    (first,) = ladder_tick(seed=1)
    match_play_to_end(match_id=first)  # finished, its next rotation not yet dealt

    assert ladder_plan(rng=random.Random(2)) == []


def test_a_table_whose_bot_left_the_ladder_frees_its_other_bots(
    bot_factory, only_durak_2p, quiet_turns
):
    import random

    from bots.play_to_end import match_play_to_end

    bot_factory(), bot_factory()
    (first,) = ladder_tick(seed=1)
    match_play_to_end(match_id=first)
    leaving, staying = (seat.bot for seat in Match.objects.get(pk=first).seats.all())
    LadderPause.objects.create(bot=leaving, reason="test")  # the table ends at this deal
    newcomer = bot_factory()

    (table,) = ladder_plan(rng=random.Random(2))

    assert {bot.pk for bot in table[2]} == {staying.pk, newcomer.pk}
