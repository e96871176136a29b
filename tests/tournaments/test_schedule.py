"""Round-robin schedules: every combination and seat rotation, duplicate decks."""

import itertools
from collections import Counter

import pytest

from tournaments.schedule import build_schedule, rotation, rounds_total

ENTRANTS = ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_round_robin_plays_every_combination_in_every_rotation_exactly_once(players):
    schedule = build_schedule(ENTRANTS, players=players, games_per_pairing=players)

    tables = Counter(match.table for match in schedule)
    expected = {
        rotation(combination, shift)
        for combination in itertools.combinations(ENTRANTS, players)
        for shift in range(players)
    }
    assert set(tables) == expected
    assert set(tables.values()) == {1}


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_every_entrant_sits_in_every_seat_equally_often(players):
    schedule = build_schedule(ENTRANTS, players=players, games_per_pairing=2 * players)

    seats = Counter((entrant, seat) for m in schedule for seat, entrant in enumerate(m.table))
    assert len(set(seats.values())) == 1
    assert {entrant for entrant, _ in seats} == set(ENTRANTS)


def test_double_round_robin_plays_the_round_robin_twice():
    single = build_schedule(ENTRANTS, players=3, games_per_pairing=3)
    double = build_schedule(ENTRANTS, players=3, games_per_pairing=3, format="double_round_robin")

    assert Counter(m.table for m in double) == Counter(
        {table: 2 for table in (m.table for m in single)}
    )
    assert {m.round for m in double} == {0, 1}


def test_each_round_holds_every_pairing_once_in_each_rotation():
    schedule = build_schedule(ENTRANTS[:4], players=2, games_per_pairing=4)

    assert rounds_total(players=2, games_per_pairing=4, format="round_robin") == 2
    for number in (0, 1):
        in_round = [(m.pairing, m.rotation) for m in schedule if m.round == number]
        assert sorted(in_round) == [(p, r) for p in range(6) for r in range(2)]
    assert [m.index for m in schedule] == list(range(len(schedule)))


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_duplicate_deals_give_every_entrant_of_a_table_every_hand_of_each_deck(players):
    schedule = build_schedule(
        ENTRANTS,
        players=players,
        games_per_pairing=2 * players,
        duplicate=True,
        format="double_round_robin",
    )

    hands: dict[tuple, set] = {}
    for match in schedule:
        for seat, entrant in enumerate(match.table):
            hands.setdefault((match.pairing, match.deck, entrant), set()).add(seat)
    assert all(seats == set(range(players)) for seats in hands.values())
    # Four decks (two per cycle), each played at every table in every rotation once.
    decks = Counter((m.pairing, m.deck) for m in schedule)
    assert {deck for _, deck in decks} == {0, 1, 2, 3}
    assert set(decks.values()) == {players}


def test_without_duplicate_no_deck_is_assigned():
    assert {m.deck for m in build_schedule(ENTRANTS, players=2, games_per_pairing=2)} == {None}


@pytest.mark.parametrize(
    ("entrants", "players", "games", "message"),
    [
        (["a"], 2, 2, "at least 2 entrants"),
        (["a", "b", "c"], 2, 3, "multiple of 2"),
        (["a", "b", "c"], 3, 0, "multiple of 3"),
        (["a", "a", "b"], 2, 2, "only once"),
    ],
)
def test_impossible_schedules_are_rejected(entrants, players, games, message):
    with pytest.raises(ValueError, match=message):
        build_schedule(entrants, players=players, games_per_pairing=games)
