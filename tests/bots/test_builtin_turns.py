"""The bot-turn driver with built-in bots: whole matches in one call, decisions that
replay from the seed, a bound on moves per call, and where it stops."""

from __future__ import annotations

import pytest

from bots import driver
from bots.models import BotTurnLease
from bots.seat_bots import _seat_bots
from cardkit.players import decision_rng, get_player
from games.models import Match, Move
from games.move_services import match_move_submit
from games.seating import SeatHolder
from games.selectors import match_state, match_states
from games.services import match_create
from tests.bots.arena_matches import (
    assert_finished_by_the_rules,
    new_match,
)


@pytest.mark.parametrize(
    ("game", "players", "options"),
    [
        ("durak", 2, {}),
        ("durak", 4, {"deck_size": 36}),
        ("durak", 2, {"format": "fool"}),
        ("volynshchik", 3, {}),
    ],
    ids=["durak-2", "durak-4", "durak-fool", "volynshchik-3"],
)
def test_builtin_bots_play_a_whole_match_in_one_call(user, builtin, game, players, options):
    bots = [builtin["greedy"], builtin["random"], builtin["greedy"], builtin["random"]]
    match = new_match(user, bots[:players], game=game, **options)

    played = driver.bot_turns_play(match_id=match.pk)

    assert_finished_by_the_rules(match)
    assert played == match.ply


def test_builtin_decisions_replay_exactly_from_the_match_seed(user, builtin):
    match = new_match(user, [builtin["greedy"], builtin["strong"], builtin["random"]])
    driver.bot_turns_play(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.seed_revealed

    seats = {seat.index: seat.bot for seat in match.seats.select_related("bot")}
    log = list(Move.objects.filter(match=match).order_by("ply"))
    for logged, state in zip(log, match_states(match, log), strict=False):
        assert state.to_move == logged.seat
        player = get_player(seats[logged.seat].builtin, match.game)
        rng = decision_rng(match.seed, logged.seat, logged.ply)
        assert player.choose(state.view(logged.seat), state.legal_moves(), rng) == logged.move


def test_driver_stops_when_a_person_is_to_move(user, user_factory, builtin):
    person = user_factory()
    match = match_create(
        creator=user,
        game="durak",
        players=2,
        seats=[SeatHolder(bot=builtin["random"]), SeatHolder(user=person)],
        move_time_limit=60,
    )

    driver.bot_turns_play(match_id=match.pk)

    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE
    assert match.to_move == 1
    assert driver.bot_turns_play(match_id=match.pk) == 0


def test_max_moves_bounds_one_call_and_the_next_call_goes_on(user, builtin):
    match = new_match(user, [builtin["random"], builtin["random"]])

    assert driver.bot_turns_play(match_id=match.pk, max_moves=3) == 3
    assert driver.bot_turns_play(match_id=match.pk, max_moves=2) == 2

    match.refresh_from_db()
    assert match.ply == 5
    assert match.status == Match.Status.ACTIVE


def test_finished_or_unknown_match_is_left_alone(user, builtin):
    match = new_match(user, [builtin["random"], builtin["greedy"]])
    driver.bot_turns_play(match_id=match.pk)

    assert driver.bot_turns_play(match_id=match.pk) == 0
    assert driver.bot_turns_play(match_id=10**9) == 0


def test_task_hands_a_long_match_to_a_new_task(user, builtin, monkeypatch):
    from bots import tasks

    sent = []
    monkeypatch.setattr(tasks, "MOVES_PER_TASK", 4)
    monkeypatch.setattr(tasks.play_bot_turns, "delay", sent.append)
    match = new_match(user, [builtin["random"], builtin["random"]])

    tasks.play_bot_turns(match.pk)

    match.refresh_from_db()
    assert match.ply == 4
    assert sent == [match.pk]


def test_match_is_let_go_when_the_driver_stops(user, user_factory, builtin):
    match = match_create(
        creator=user,
        game="durak",
        players=2,
        seats=[SeatHolder(bot=builtin["greedy"]), SeatHolder(user=user_factory())],
        move_time_limit=60,
    )
    match.refresh_from_db()
    if match.to_move == 1:  # The person opens: make their move, so that the bot's is next.
        state = match_state(match)
        match_move_submit(match_id=match.pk, seat=1, ply=0, move=state.legal_moves()[0])

    assert driver.bot_turns_play(match_id=match.pk) >= 1

    match.refresh_from_db()
    assert (match.status, match.to_move) == (Match.Status.ACTIVE, 1)
    assert not BotTurnLease.objects.filter(match_id=match.pk).exists()


def test_seats_bots_are_read_whole_in_one_query(
    user, user_factory, builtin, django_assert_num_queries
):
    bot = builtin["greedy"]
    match = match_create(
        creator=user, game="durak", players=3,
        seats=[SeatHolder(bot=bot), SeatHolder(user=user_factory()), SeatHolder(bot=bot)],
    )  # fmt: skip

    with django_assert_num_queries(1):
        seat_bots = _seat_bots(match.pk, recent=False)

    assert sorted(seat_bots) == [0, 2]
    for read in seat_bots.values():
        assert {f.attname: getattr(read, f.attname) for f in read._meta.concrete_fields} == {
            f.attname: getattr(bot, f.attname) for f in bot._meta.concrete_fields
        }
