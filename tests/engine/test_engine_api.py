"""The engine's public entry points: options, seeding, serialisation, views, errors, limits."""

from __future__ import annotations

import random

import pytest

from cardkit.engine import IllegalMove, InvalidMove, load_game, load_state
from cardkit.engine.cards import CARD_INDEX, deck_cards, mask_of
from cardkit.engine.volynshchik import VolynshchikState


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("chess", {}),
        ("durak", {"players": 1}),
        ("durak", {"players": 5}),
        ("durak", {"deck_size": 52}),
        ("volynshchik", {"players": 6}),
        ("volynshchik", {"deck_size": 36}),
        ("durak", {"colour": "red"}),
    ],
)
def test_unknown_game_or_bad_option_is_a_value_error(name, options):
    with pytest.raises(ValueError):
        load_game(name, **options)


@pytest.mark.parametrize(
    "deck",
    [
        deck_cards(36)[:-1],
        deck_cards(36)[:-1] + ["6S"],
        deck_cards(32) + ["6S", "6H", "6D", "XX"],
    ],
)
def test_a_deck_that_is_not_exactly_the_cards_is_refused(deck):
    with pytest.raises(ValueError):
        load_game("durak", players=2).deal(deck, dealer=0)


def test_deal_needs_exactly_one_of_deck_and_seed():
    game = load_game("durak", players=2)
    with pytest.raises(ValueError):
        game.deal(dealer=0)
    with pytest.raises(ValueError):
        game.deal(deck_cards(36), seed=1, dealer=0)


def test_dealer_must_be_a_seat():
    with pytest.raises(ValueError):
        load_game("volynshchik", players=3).deal(seed=1, dealer=3)


@pytest.mark.parametrize("name", ["durak", "volynshchik"])
def test_same_seed_gives_same_deal_and_other_seed_another(name):
    game = load_game(name, players=3)
    assert game.deal(seed=12345, dealer=0) == game.deal(seed=12345, dealer=0)
    assert game.deal(seed="12345", dealer=0) == game.deal(seed="12345", dealer=0)
    assert game.deal(seed=12345, dealer=0) != game.deal(seed=12346, dealer=0)


def test_seeded_deck_is_stable_across_versions():
    # A change here would silently change every archived seeded match.
    state = load_game("durak", players=2).deal(seed=12345, dealer=0)
    assert state.view(0)["trump_card"] == state.to_json()["trump_card"]
    assert (state.hand(0), state.hand(1), state.to_json()["trump_card"]) == (
        SEED_12345_HANDS[0], SEED_12345_HANDS[1], SEED_12345_TRUMP
    )


SEED_12345_HANDS = (["9S", "JH", "6D", "8D", "JD", "QC"], ["7S", "AS", "QH", "TD", "KD", "KC"])
SEED_12345_TRUMP = "JS"


@pytest.mark.parametrize("name", ["durak", "volynshchik"])
def test_play_returns_a_new_state_and_leaves_the_old_one_unchanged(name):
    state = load_game(name, players=2).deal(seed=7, dealer=0)
    before = state.to_json()
    after = state.play(state.legal_moves()[0])
    assert after is not state
    assert state.to_json() == before
    assert after.ply == state.ply + 1


def positions_by_phase(name: str) -> dict:
    """The first position of each phase of a random 2-player deal, and its end."""
    state = load_game(name, players=2).deal(seed=7, dealer=0)
    positions = {}
    rng = random.Random(7)
    while not state.is_over:
        positions.setdefault(state.phase, state)
        state = state.play(rng.choice(state.legal_moves()))
    positions["over"] = state
    return positions


@pytest.mark.parametrize("phase", ["attack", "defend", "over"])
@pytest.mark.parametrize(
    "move",
    [None, [], "take", {"cards": ["6S"]}, {"type": "pass"}, {"type": "attack", "cards": "6S"},
     {"type": "attack", "cards": ["6X"]}, {"type": "attack", "cards": [6]},
     {"type": "attack", "cards": ["6S", "6S"]}, {"type": "attack"},
     {"type": "attack", "cards": ["6S"], "x": 1}, {"type": "take", "x": 1},
     {"type": "beat", "covers": {}}, {"type": "beat", "covers": [["6S"]]},
     {"type": "beat", "covers": [["6S", "ZZ"]]}, {"type": "beat", "covers": "6S"}],
)
def test_an_unreadable_durak_move_is_an_invalid_move_in_every_phase(phase, move):
    state = positions_by_phase("durak")[phase]
    with pytest.raises(InvalidMove):
        state.play(move)


@pytest.mark.parametrize("phase", ["lead", "respond", "over"])
@pytest.mark.parametrize(
    "move",
    [{"type": "take", "card": "7S"}, {"type": "declare", "x": 1}, {"type": "cover"},
     {"type": "cover", "card": "ZZ"}, {"type": "lead"}, {"type": "lead", "card": "7S", "x": 1},
     {"type": "pass"}],
)
def test_an_unreadable_volynshchik_move_is_an_invalid_move_in_every_phase(phase, move):
    state = positions_by_phase("volynshchik")[phase]
    with pytest.raises(InvalidMove):
        state.play(move)


def test_invalid_move_is_an_illegal_move_and_a_value_error():
    assert issubclass(InvalidMove, IllegalMove)
    assert issubclass(IllegalMove, ValueError)


def test_a_move_after_the_end_is_refused():
    game = load_game("durak", players=2)
    state = game.deal(seed=3, dealer=0)
    rng = random.Random(3)
    while not state.is_over:
        state = state.play(rng.choice(state.legal_moves()))
    with pytest.raises(IllegalMove, match="over"):
        state.play({"type": "take"})


def test_a_view_of_a_seat_out_of_range_is_refused():
    with pytest.raises(ValueError):
        load_game("durak", players=2).deal(seed=1, dealer=0).view(2)


def cycle_position() -> VolynshchikState:
    """Return docs/rules.md's endless Volynshchik position (5 players, seats 0, 2, 3 out)."""
    game = load_game("volynshchik", players=5)
    reserves = tuple(CARD_INDEX[c] for c in ["AS", "7C", "AD", "AH", "8C"])
    hands = (0, mask_of(["TD"]), 0, 0, mask_of(["7H", "9S", "JH"]))
    return VolynshchikState._make(
        game, dealer=0, hands=hands, reserves=reserves, declared=0b10010,
        pile=(CARD_INDEX["9H"],), to_move=4, out_order=(0, 2, 3),
    )


def table_of(state) -> tuple:
    data = state.to_json()
    return (data["hands"], data["pile"], data["declared"], data["to_move"], data["in_deal"])


def test_rules_endless_volynshchik_cycle_ends_drawn_on_fifth_occurrence_of_its_start():
    start = cycle_position()
    state = start
    occurrences = 1
    while not state.is_over:
        state = state.play(state.legal_moves()[0])
        if table_of(state) == table_of(start):
            occurrences += 1
    assert state.result == {"loser": None, "out_order": [0, 2, 3]}
    assert state.end_reason == "repetition"
    assert table_of(state) == table_of(start)
    assert occurrences == 5


@pytest.mark.parametrize("seed", range(20))
def test_rules_endless_volynshchik_cycle_ends_drawn_whatever_anyone_plays(seed):
    rng = random.Random(seed)
    state = cycle_position()
    while not state.is_over:
        state = state.play(rng.choice(state.legal_moves()))
    assert state.result == {"loser": None, "out_order": [0, 2, 3]}
    assert state.end_reason == "repetition"


def test_fourth_occurrence_of_a_position_does_not_end_the_deal():
    state = cycle_position()
    for _ in range(31):
        state = state.play(state.legal_moves()[0])
    assert not state.is_over
    assert state.play(state.legal_moves()[0]).is_over


@pytest.mark.parametrize("name", ["durak", "volynshchik"])
def test_a_deal_reaching_one_thousand_moves_ends_drawn(name):
    game = load_game(name, players=3)
    state = game.deal(seed=11, dealer=0)
    state = state.play(state.legal_moves()[0])
    data = state.to_json()
    data["ply"] = 999
    state = load_state(data)
    final = state.play(state.legal_moves()[0])
    assert final.is_over
    assert final.result == {"loser": None, "out_order": data["out_order"]}
    assert final.end_reason == "move_limit"


@pytest.mark.parametrize("name", ["durak", "volynshchik"])
def test_view_shows_own_hand_and_hides_the_others(name):
    state = load_game(name, players=3).deal(seed=5, dealer=0)
    for seat in range(3):
        view = state.view(seat)
        assert view["hand"] == state.hand(seat)
        assert view["hand_sizes"][seat] == len(state.hand(seat))
        assert "hands" not in view
    assert "hand" not in state.view(None)


def test_reveal_shows_every_hand():
    state = load_game("durak", players=3).deal(seed=5, dealer=0)
    assert state.reveal()["hands"] == [state.hand(p) for p in range(3)]


@pytest.mark.parametrize("name", ["durak", "volynshchik"])
def test_a_serialised_state_with_a_card_twice_or_missing_is_refused(name):
    data = load_game(name, players=2).deal(seed=4, dealer=0).to_json()
    data["hands"][0] = data["hands"][0] + [data["hands"][1][0]]
    with pytest.raises(ValueError, match="exactly the deck"):
        load_state(data)
    data["hands"][0] = data["hands"][0][:-2]
    with pytest.raises(ValueError, match="exactly the deck"):
        load_state(data)


@pytest.mark.parametrize("name", ["durak", "volynshchik"])
def test_legal_moves_can_be_changed_by_the_caller_without_harm(name):
    state = load_game(name, players=2).deal(seed=4, dealer=0)
    first = state.legal_moves()
    first[0]["type"] = "mangled"
    first.clear()
    assert state.legal_moves() and state.legal_moves()[0]["type"] != "mangled"
