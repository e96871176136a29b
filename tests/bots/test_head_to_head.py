"""Head-to-head records (bots.headtohead, GET /api/v1/bots/{name}/opponents/)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from bots.headtohead import bot_opponents, bot_pairings, score_interval
from bots.models import Bot
from games.models import Match
from tests.matches import finished_bot_match


@pytest.fixture
def arena(db, user_factory):
    """Four built-in bots and a helper that stores a finished match between them."""
    owner = user_factory()
    bots = {
        name: Bot.objects.create(
            name=name, owner=owner, kind=Bot.Kind.BUILTIN, builtin="random", games=["durak"]
        )
        for name in ("alpha", "beta", "gamma", "delta")
    }
    clock = itertools.count(1)
    start = timezone.now() - timedelta(days=1)

    def play(names, loser, **options):
        finished = start + timedelta(minutes=next(clock))
        return finished_bot_match(
            [bots[name] for name in names], loser, finished_at=finished, **options
        )

    return bots, play


def _record(records, opponent, players=2):
    [record] = [r for r in records if r.opponent == opponent and r.players == players]
    return record


def test_record_counts_wins_losses_draws_and_forfeits_by_kind(arena):
    bots, play = arena
    play(["alpha", "beta"], 1)
    play(["beta", "alpha"], 0)
    play(["alpha", "beta"], 0, forfeit=0, reason="timeout")
    play(["alpha", "beta"], 0, forfeit=0, reason="illegal_move")
    play(["beta", "alpha"], 1, forfeit=1, reason="connection_error")
    play(["alpha", "beta"], None, reason="repetition")
    play(["alpha", "beta"], 1, status="aborted")  # not finished: not counted
    record = _record(bot_opponents(mine={"bot_id": bots["alpha"].pk}), "beta")
    assert (record.games, record.wins, record.losses, record.draws) == (6, 2, 3, 1)
    assert record.points == 2.5
    assert record.forfeits == {"timeouts": 1, "crashes": 1, "illegal": 1, "resigned": 0}
    low, high = record.interval
    assert low < record.score < high


def test_a_three_player_match_scores_each_pair_of_seats(arena):
    bots, play = arena
    play(["alpha", "beta", "gamma"], 2)
    records = bot_opponents(mine={"bot_id": bots["alpha"].pk})
    beta, gamma = _record(records, "beta", 3), _record(records, "gamma", 3)
    assert (beta.games, beta.others, beta.points) == (1, 1, 0.5)
    assert (gamma.games, gamma.wins, gamma.points) == (1, 1, 1.0)


def test_record_is_one_query_however_many_matches(arena, django_assert_num_queries):
    bots, play = arena
    for i in range(30):
        play(["alpha", ["beta", "gamma", "delta"][i % 3]], i % 2)
    with django_assert_num_queries(1):
        records = bot_opponents(mine={"bot_id": bots["alpha"].pk})
    assert sum(r.games for r in records) == 30


def test_record_equals_a_count_over_the_archive_the_slow_way(arena):
    bots, play = arena
    rng = random.Random(5)
    names = list(bots)
    for _ in range(60):
        players = rng.choice([2, 3])
        table = rng.sample(names, players)
        loser = rng.choice([None, *range(players)])
        forfeit = loser if loser is not None and rng.random() < 0.3 else None
        play(table, loser, forfeit=forfeit, reason=rng.choice(["timeout", "http_status"]))
    alpha = bots["alpha"]
    slow = Counter()
    for match in Match.objects.filter(status="finished"):
        seats = {seat.bot_id: seat.index for seat in match.seats.all()}
        if alpha.pk not in seats:
            continue
        mine = seats[alpha.pk]
        for bot_id, index in seats.items():
            if bot_id == alpha.pk:
                continue
            key = (Bot.objects.get(pk=bot_id).name, match.players)
            slow[key + ("games",)] += 1
            slow[key + ("points",)] += (
                1.0 if match.loser == index else 0.0 if match.loser == mine else 0.5
            )
            slow[key + ("losses",)] += match.loser == mine
            slow[key + ("timeouts",)] += match.forfeit_seat == mine and (
                match.end_reason == "timeout"
            )
    fast = Counter()
    for r in bot_opponents(mine={"bot_id": alpha.pk}):
        key = (r.opponent, r.players)
        fast[key + ("games",)] += r.games
        fast[key + ("points",)] += r.points
        fast[key + ("losses",)] += r.losses
        fast[key + ("timeouts",)] += r.forfeits["timeouts"]
    assert +fast == +slow


def test_pairings_list_the_matches_with_one_opponent_oldest_first(arena):
    bots, play = arena
    first = play(["alpha", "beta"], 1)
    play(["alpha", "gamma"], 1)
    second = play(["beta", "alpha"], 1, forfeit=1, reason="timeout")
    lines = bot_pairings(mine={"bot_id": bots["alpha"].pk}, opponent_id=bots["beta"].pk)
    assert [(line.match_id, line.points, line.forfeit) for line in lines] == [
        (first.pk, 1.0, ""), (second.pk, 0.0, "mine"),
    ]


def test_score_interval_is_wilsons():
    assert score_interval(0, 0) == (0.0, 1.0)
    low, high = score_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)


def test_opponents_api_lists_records(arena, api_client):
    bots, play = arena
    play(["alpha", "beta"], 1)
    answer = api_client.get("/api/v1/bots/alpha/opponents/")
    assert answer.status_code == 200
    [row] = answer.json()
    assert row["opponent"] == "beta" and row["games"] == 1 and row["points"] == 1.0
    assert row["forfeits"]["timeouts"] == 0 and 0 < row["score_low"] < row["score_high"]


def test_opponents_api_of_an_unknown_bot_is_404(db, api_client):
    assert api_client.get("/api/v1/bots/nobody/opponents/").status_code == 404
