"""Records kept as matches finish (games.records): equal to a count over the archive."""

from __future__ import annotations

import random

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from bots import services as bot_services
from bots import versions
from bots.models import Bot
from games.match_endings import match_forfeit, match_resign
from games.models import Match, PairRecord, Seat, VersionRecord
from games.records import match_records_count, records_differences, records_rebuild
from games.seating import SeatHolder
from games.services import match_create
from tests.matches import finished_bot_match, play_random_moves

pytestmark = pytest.mark.django_db

REASONS = ["loser", "timeout", "illegal_move", "malformed_response", "resign", "http_status"]


@pytest.fixture
def bots(user_factory):
    owner = user_factory()
    return [
        Bot.objects.create(
            name=f"bot{n}", owner=owner, kind=Bot.Kind.BUILTIN, builtin="random",
            games=["durak", "volynshchik"],
        )  # fmt: skip
        for n in range(5)
    ]


def random_history(bots: list[Bot], rng: random.Random, matches: int) -> list[Match]:
    """Store ``matches`` random matches: shapes, results, forfeits, versions started
    between them, a bot in two seats, an open seat, rated or not, some aborted."""
    played = []
    for _ in range(matches):
        if rng.random() < 0.1:
            bot = rng.choice(bots)
            if bot.version_id is None or rng.random() < 0.5:
                versions.bot_version_start(bot_id=bot.pk, reason="owner")
            bot.refresh_from_db()
        game = rng.choice(["durak", "volynshchik"])
        players = rng.choice([2, 2, 3, 4] if game == "durak" else [2, 3, 5])
        table = [rng.choice(bots) if rng.random() < 0.15 else None for _ in range(players)]
        others = rng.sample(bots, players)
        table = [seat or other for seat, other in zip(table, others, strict=True)]
        if rng.random() < 0.05:
            table[-1] = None  # a seat no bot holds
        loser = rng.choice([None, *range(players)])
        forfeit = loser if loser is not None and rng.random() < 0.3 else None
        played.append(
            finished_bot_match(
                table, loser, forfeit=forfeit, reason=rng.choice(REASONS), game=game,
                rated=rng.random() < 0.5,
                status="aborted" if rng.random() < 0.05 else "finished",
            )  # fmt: skip
        )
    return played


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_records_equal_a_count_over_the_archive_after_a_random_history(bots, seed):
    random_history(bots, random.Random(seed), 80)
    assert PairRecord.objects.exists() and VersionRecord.objects.exists()
    assert records_differences() == []


def test_counting_a_match_twice_counts_it_once(bots):
    matches = random_history(bots, random.Random(7), 30)
    kept = sorted(PairRecord.objects.values_list("bot", "opponent", "games", "wins"))
    for match in matches:
        assert not match_records_count(match=Match.objects.get(pk=match.pk))
    assert sorted(PairRecord.objects.values_list("bot", "opponent", "games", "wins")) == kept
    assert records_differences() == []


def test_a_match_not_finished_is_not_counted(bots):
    aborted = finished_bot_match(bots[:2], 1, status="aborted")
    assert not match_records_count(match=aborted)
    assert not PairRecord.objects.exists()


def test_records_differences_name_a_record_kept_wrong(bots):
    finished_bot_match(bots[:2], 1)
    PairRecord.objects.filter(bot=bots[0]).update(wins=0)
    [difference] = records_differences()
    assert difference.startswith(f"pair ({bots[0].pk}, ")


def pair_rows() -> set[tuple]:
    return set(PairRecord.objects.values_list(
        "bot", "version", "opponent", "game", "players", "games", "wins", "losses", "draws",
        "timeouts", "crashes", "illegal", "resigned", "rated_games", "rated_wins",
    ))  # fmt: skip


def test_rebuild_replaces_the_records_with_the_count_and_marks_the_matches(bots):
    random_history(bots, random.Random(11), 40)
    kept = pair_rows()
    PairRecord.objects.all().delete()
    VersionRecord.objects.update(games=99)
    Match.objects.update(records_counted=False)
    Seat.objects.update(forfeited=False)
    records_rebuild()
    assert records_differences() == []
    assert pair_rows() == kept
    assert not Match.objects.filter(status="finished", records_counted=False).exists()
    forfeits = Seat.objects.filter(match__status="finished", match__forfeit_seat=F("index"))
    assert set(Seat.objects.filter(forfeited=True)) == set(forfeits)
    # Counted by the rebuild, a match is not counted again when its finish is replayed.
    assert not match_records_count(match=Match.objects.filter(status="finished").first())


def test_rebuild_records_command_checks_and_rebuilds(bots, capsys):
    finished_bot_match(bots[:2], 1)
    call_command("rebuild_records", "--check")
    VersionRecord.objects.update(losses=5)
    with pytest.raises(CommandError, match="2 kept records differ"):
        call_command("rebuild_records", "--check")
    call_command("rebuild_records")
    call_command("rebuild_records", "--check")
    assert "equal a count over the archive" in capsys.readouterr().out


def test_each_way_a_match_finishes_counts_it(user_factory):
    owner = user_factory()
    alpha, _ = bot_services.bot_register(owner=owner, name="alpha", kind="client", games=["durak"])
    beta, _ = bot_services.bot_register(owner=owner, name="beta", kind="client", games=["durak"])

    def start() -> Match:
        return match_create(
            creator=owner, game="durak", players=2,
            seats=[SeatHolder(bot=alpha), SeatHolder(bot=beta)], notify=False,
        )  # fmt: skip

    played = play_random_moves(start(), 2000, seed=3)
    assert played.status == Match.Status.FINISHED and played.forfeit_seat is None
    match_forfeit(match_id=start().pk, seat=0, code="timeout", detail="too slow")
    match_resign(match_id=start().pk, seat=1)
    assert Match.objects.filter(records_counted=True).count() == 3
    record = PairRecord.objects.get(bot=alpha, opponent=beta)
    assert (record.games, record.timeouts) == (3, 1)
    assert VersionRecord.objects.get(bot=beta).forfeits == 1
    assert sorted(Seat.objects.filter(forfeited=True).values_list("bot__name", flat=True)) == [
        "alpha", "beta",
    ]  # fmt: skip
    assert records_differences() == []
