"""Gauntlet tournaments: the candidate plays every other entrant, the others never meet.

The played tests run on SQLite and, under ``DATABASE_URL``, on PostgreSQL.
"""

import itertools
from collections import Counter

import pytest

from games.models import Match
from tournaments.creation import TournamentError, tournament_create
from tournaments.models import RatedMatch, Tournament, TournamentMatch
from tournaments.schedule import build_schedule, rotation
from tournaments.selectors import tournament_standings
from tournaments.services import tournament_play_inline

ENTRANTS = ["cand", "b", "c", "d", "e"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_gauntlet_seats_the_candidate_at_every_table_with_each_combination_of_the_others(
    players,
):
    schedule = build_schedule(
        ENTRANTS, players=players, games_per_pairing=players, format="gauntlet"
    )

    expected = {
        rotation(("cand", *others), shift)
        for others in itertools.combinations(ENTRANTS[1:], players - 1)
        for shift in range(players)
    }
    assert Counter(m.table for m in schedule) == Counter(dict.fromkeys(expected, 1))


def test_two_player_gauntlet_pairs_the_candidate_with_each_other_entrant_only():
    schedule = build_schedule(ENTRANTS, players=2, games_per_pairing=4, format="gauntlet")

    pairs = Counter(frozenset(m.table) for m in schedule)
    assert pairs == Counter({frozenset({"cand", other}): 4 for other in ENTRANTS[1:]})


def test_gauntlet_duplicate_deals_give_the_candidate_and_each_opponent_both_hands_of_a_deck():
    schedule = build_schedule(
        ENTRANTS, players=2, games_per_pairing=4, format="gauntlet", duplicate=True
    )

    assert {m.deck for m in schedule} == {0, 1}
    hands: dict[tuple, set] = {}
    for match in schedule:
        for seat, entrant in enumerate(match.table):
            hands.setdefault((match.pairing, match.deck, entrant), set()).add(seat)
    assert len(hands) == 4 * 2 * 2
    assert all(seats == {0, 1} for seats in hands.values())
    # Each round is one deck, dealt to every table of the round.
    assert {(m.round, m.deck) for m in schedule} == {(0, 0), (1, 1)}


@pytest.mark.django_db
def test_gauntlet_runs_to_completion_with_duplicate_deals_and_ratings(bot_factory, quiet_turns):
    candidate = bot_factory("greedy")
    others = [bot_factory("random") for _ in range(3)]
    tournament = tournament_create(
        creator=None, name="gauntlet", game="durak", players=2, bots=others,
        candidate=candidate, format="gauntlet", games_per_pairing=2, duplicate=True,
        rated=True, move_time_limit=5.0,
    )  # fmt: skip

    tournament_play_inline(tournament_id=tournament.pk)

    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    assert (tournament.matches_done, tournament.matches_total) == (6, 6)
    assert list(tournament.entries.values_list("bot_id", flat=True))[0] == candidate.pk
    played = TournamentMatch.objects.filter(tournament=tournament).select_related("match")
    assert {tm.status for tm in played} == {TournamentMatch.Status.FINISHED}
    assert all(candidate.pk in tm.table for tm in played)
    # One deck for the round, dealt at each of its three tables in both seat orders.
    assert played.values("match__seed").distinct().count() == 1
    matches = Match.objects.filter(tournament_match__tournament=tournament)
    assert RatedMatch.objects.filter(match__in=matches).count() == 6
    standings = tournament_standings(tournament)
    assert {line.games for line in standings.lines} == {6, 2}
    assert sum(line.points for line in standings.lines) == 6
    cross = standings.crosstable
    assert all(cross[a.pk][b.pk][1] == 0 for a, b in itertools.combinations(others, 2))


@pytest.mark.django_db
def test_only_a_gauntlet_takes_a_candidate(bot_factory):
    a, b = bot_factory(), bot_factory()

    with pytest.raises(TournamentError, match="only a gauntlet"):
        tournament_create(creator=None, name="x", game="durak", players=2, bots=[a, b],
                          candidate=a)  # fmt: skip


@pytest.mark.django_db
def test_gauntlet_through_the_api_names_its_candidate(user_api_client, user, bot_factory):
    a, b, c = bot_factory(), bot_factory(), bot_factory()

    response = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "g", "game": "durak", "format": "gauntlet", "bots": [a.name, b.name],
         "candidate": c.name, "start": False},
        format="json",
    )  # fmt: skip

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["format"] == "gauntlet"
    assert body["candidate"] == c.name
    assert body["entrants"] == [c.name, a.name, b.name]
    assert body["progress"]["total"] == 4


@pytest.mark.django_db
def test_api_refuses_a_candidate_for_a_round_robin_with_a_400(user_api_client, bot_factory):
    a, b = bot_factory(), bot_factory()

    response = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "g", "game": "durak", "bots": [a.name, b.name], "candidate": a.name},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "only a gauntlet" in str(response.json()["error"])


@pytest.mark.django_db
def test_admin_adds_a_gauntlet_with_its_candidate_first(admin_client, bot_factory):
    a, b, c = bot_factory(), bot_factory(), bot_factory()
    form = {"name": "Admin gauntlet", "game": "durak", "players": 2, "deck_size": 36,
            "match_format": "deal", "format": "gauntlet", "games_per_pairing": 2,
            "move_time_limit": 5, "bots": [a.pk, b.pk]}  # fmt: skip

    missing = admin_client.post("/admin/tournaments/tournament/add/", form)
    response = admin_client.post("/admin/tournaments/tournament/add/", form | {"candidate": c.pk})

    assert missing.status_code == 200 and b"A gauntlet needs its candidate" in missing.content
    assert response.status_code == 302
    tournament = Tournament.objects.get(name="Admin gauntlet")
    assert list(tournament.entries.values_list("bot_id", flat=True)) == [c.pk, a.pk, b.pk]
    assert tournament.matches.count() == 4
