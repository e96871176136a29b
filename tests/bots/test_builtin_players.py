"""The built-in players: legal, deterministic, blind to hidden cards, and better than chance."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from cardkit.engine import load_game, load_state
from cardkit.players import PLAYERS, decision_rng, get_player
from cardkit.players.determinise import cannot_hold, sample_world
from cardkit.players.greedy import durak_pick, volynshchik_pick

VARIANTS = [
    ("durak", 2, 36), ("durak", 3, 36), ("durak", 4, 36), ("durak", 2, 32),
    ("volynshchik", 2, 32), ("volynshchik", 3, 32), ("volynshchik", 4, 32),
    ("volynshchik", 5, 32),
]
# Enough playouts to exercise the search, few enough to keep the tests fast.
SMALL_BUDGET = 6


def player(name: str, game: str):
    return get_player(name, game, budget=SMALL_BUDGET if name == "strong" else None)


def positions(name: str, players: int, deck_size: int, deals: int, seed: int):
    """Yield the states met when random players play ``deals`` deals out."""
    game = load_game(name, players=players, deck_size=deck_size)
    rng = random.Random(seed)
    for number in range(deals):
        state = game.deal(seed=f"{seed}:{number}", dealer=number % players)
        while not state.is_over:
            yield state
            state = state.play(rng.choice(state.legal_moves()))


# -- registry and seeding ----------------------------------------------------------------


def test_every_player_exists_for_both_games():
    assert PLAYERS == ("random", "greedy", "strong")
    for game in ("durak", "volynshchik"):
        for name in PLAYERS:
            chosen = get_player(name, game)
            assert (chosen.name, chosen.game) == (name, game)


@pytest.mark.parametrize(
    ("name", "game", "options"),
    [
        ("minimax", "durak", {}),
        ("random", "chess", {}),
        ("greedy", "volynshchik", {"budget": 10}),
        ("strong", "durak", {"budget": 0}),
    ],
)
def test_unknown_player_game_or_option_is_a_value_error(name, game, options):
    with pytest.raises(ValueError):
        get_player(name, game, **options)


def test_decision_rng_is_a_fixed_function_of_match_seat_and_ply():
    # Pinned: archived games replay only while this stays the same.
    assert decision_rng("match-1", 1, 17).random() == 0.7250942750899186
    draws = {decision_rng(seed, seat, ply).random()
             for seed, seat, ply in [("m", 0, 0), ("m", 1, 0), ("m", 0, 1), ("n", 0, 0)]}
    assert len(draws) == 4
    assert decision_rng(7, 0, 0).random() == decision_rng("7", 0, 0).random()


def test_the_players_import_no_django():
    code = (
        "import sys, cardkit.players, benchmarks.bots\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


# -- legal and deterministic -------------------------------------------------------------


@pytest.mark.parametrize("name", PLAYERS)
@pytest.mark.parametrize(("game_name", "players", "deck_size"), VARIANTS)
def test_player_always_returns_a_legal_move(name, game_name, players, deck_size):
    """Seat 0 is the player under test, the others random; play whole deals."""
    game = load_game(game_name, players=players, deck_size=deck_size)
    tested = player(name, game_name)
    other = get_player("random", game_name)
    decisions = 0
    for number in range(6 if name == "strong" else 30):
        state = game.deal(seed=f"legal:{number}", dealer=number % players)
        while not state.is_over:
            seat = state.to_move
            moves = state.legal_moves()
            rng = decision_rng(f"legal:{number}", seat, state.ply)
            move = (tested if seat == 0 else other).choose(state.view(seat), moves, rng)
            assert move in moves
            decisions += seat == 0
            state = state.play(move)
    assert decisions > 30


@pytest.mark.parametrize("name", PLAYERS)
@pytest.mark.parametrize(("game_name", "players", "deck_size"), VARIANTS)
def test_same_view_and_rng_seed_give_the_same_move(name, game_name, players, deck_size):
    tested = player(name, game_name)
    for i, state in enumerate(positions(game_name, players, deck_size, deals=2, seed=11)):
        if i % 5:
            continue
        seat = state.to_move
        moves = state.legal_moves()
        first = tested.choose(state.view(seat), moves, random.Random(i))
        again = tested.choose(state.view(seat), list(moves), random.Random(i))
        assert first == again


# -- hidden information ------------------------------------------------------------------


def hidden_swap(state) -> tuple:
    """Return the state with two cards the seat to move cannot see swapped, or None."""
    data = state.to_json()
    seat = state.to_move
    n = len(data["hands"])
    hidden = []  # (place, index) of every card the seat to move cannot see
    for other in range(n):
        if other != seat:
            known = set(data["known"][other])
            hidden += [(("hands", other), c) for c in data["hands"][other] if c not in known]
    if data["game"] == "durak":
        hidden += [(("talon", None), c) for c in data["talon"][:-1]]
    else:
        hidden += [(("reserves", p), data["reserves"][p])
                   for p in range(n) if p != seat and p not in data["declared"]]
    places = {place for place, _card in hidden}
    if len(places) < 2:
        return None
    (place_a, a), (place_b, b) = hidden[0], next(h for h in hidden if h[0] != hidden[0][0])

    def put(place, old, new):
        field, index = place
        if field == "reserves":
            data["reserves"][index] = new
        else:
            cards = data[field] if index is None else data[field][index]
            cards[cards.index(old)] = new

    put(place_a, a, b)
    put(place_b, b, a)
    return load_state(data)


@pytest.mark.parametrize(("game_name", "players", "deck_size"), VARIANTS)
def test_strong_decision_depends_on_the_view_not_the_hidden_cards(
    game_name, players, deck_size
):
    strong = get_player("strong", game_name, budget=12)
    checked = 0
    for i, state in enumerate(positions(game_name, players, deck_size, deals=3, seed=5)):
        if i % 3 or len(state.legal_moves()) < 2:
            continue
        twin = hidden_swap(state)
        if twin is None:
            continue
        seat = state.to_move
        assert twin.to_json() != state.to_json()
        assert twin.view(seat) == state.view(seat)
        assert twin.legal_moves() == state.legal_moves()
        moves = state.legal_moves()
        assert (strong.choose(state.view(seat), moves, random.Random(i))
                == strong.choose(twin.view(seat), moves, random.Random(i)))
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize(("game_name", "players", "deck_size"), VARIANTS)
def test_sampled_world_gives_the_seat_exactly_its_view(game_name, players, deck_size):
    rng = random.Random(3)
    for state in positions(game_name, players, deck_size, deals=4, seed=8):
        seat = state.to_move
        view = state.view(seat)
        world = sample_world(view, rng)
        assert world.view(seat) == view
        assert world.legal_moves() == state.legal_moves()


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_volynshchik_inference_never_rules_out_a_card_actually_held(players):
    """A seat that took or declared held no higher card of the top card's suit."""
    inferred = 0
    for state in positions("volynshchik", players, 32, deals=30, seed=21):
        truth = state.to_json()
        forbidden = cannot_hold(state.view(None))
        for seat in range(players):
            hidden = set(truth["hands"][seat]) - set(truth["known"][seat])
            assert not hidden & forbidden[seat]
            inferred += len(forbidden[seat])
    assert inferred > 0


# -- the greedy rules --------------------------------------------------------------------


def test_durak_greedy_attacks_with_its_lowest_plain_rank_all_at_once():
    moves = [{"type": "attack", "cards": c}
             for c in (["7H"], ["7D"], ["7H", "7D"], ["6S"], ["QC"])]
    assert durak_pick(moves, "S", 20, random.Random(0)) == {
        "type": "attack", "cards": ["7H", "7D"]}


def test_durak_greedy_beats_cheaply_and_takes_rather_than_spend_two_trumps():
    single = [{"type": "beat", "covers": [["8H", "AH"]]},
              {"type": "beat", "covers": [["8H", "9H"]]},
              {"type": "beat", "covers": [["8H", "6S"]]},
              {"type": "take"}]
    assert durak_pick(single, "S", 20, random.Random(0)) == single[1]
    double = [{"type": "beat", "covers": [["8H", "6S"], ["8D", "7S"]]}, {"type": "take"}]
    assert durak_pick(double, "S", 10, random.Random(0)) == {"type": "take"}
    # Once the talon is gone, taking only adds cards: beat whatever it costs.
    assert durak_pick(double, "S", 0, random.Random(0)) == double[0]


def test_volynshchik_greedy_covers_low_and_declares_only_when_it_helps():
    covers = [{"type": "cover", "card": c} for c in ("AH", "9H", "7C")]
    assert volynshchik_pick(covers, hand=["AH", "9H", "7C"], top="8H", reserve="KC",
                            trump="C", rng=random.Random(0)) == covers[1]
    stuck = [{"type": "take"}, {"type": "declare"}]
    pick = volynshchik_pick(stuck, hand=["7C", "8D"], top="AH", reserve="KC", trump=None,
                            rng=random.Random(0))
    assert pick == {"type": "declare"}
    pick = volynshchik_pick(stuck, hand=["7D", "8D"], top="AH", reserve="KC", trump=None,
                            rng=random.Random(0))
    assert pick == {"type": "take"}


def test_volynshchik_greedy_leads_the_lowest_card_of_its_longest_suit():
    moves = [{"type": "lead", "card": c} for c in ("7S", "9H", "JH", "8D", "KH")]
    assert volynshchik_pick(moves, hand=[m["card"] for m in moves], top=None, reserve="AC",
                            trump=None, rng=random.Random(0)) == {"type": "lead", "card": "9H"}


# -- strength ----------------------------------------------------------------------------


def test_greedy_loses_well_under_40_percent_to_random_in_two_player_durak():
    """100 decks, each played twice with the seats swapped."""
    game = load_game("durak", players=2)
    bots = {"greedy": get_player("greedy", "durak"), "random": get_player("random", "durak")}
    greedy_losses = games = 0
    for deck in range(100):
        for seating in (("greedy", "random"), ("random", "greedy")):
            state = game.deal(seed=f"h2h:{deck}", dealer=0)
            while not state.is_over:
                seat = state.to_move
                rng = decision_rng(f"h2h:{deck}:{seating[0]}", seat, state.ply)
                move = bots[seating[seat]].choose(state.view(seat), state.legal_moves(), rng)
                state = state.play(move)
            loser = state.result["loser"]
            greedy_losses += loser is not None and seating[loser] == "greedy"
            games += 1
    assert greedy_losses / games < 0.40


@pytest.mark.parametrize("game_name", ["durak", "volynshchik"])
def test_strong_with_a_budget_of_one_playout_plays_the_greedy_move(game_name):
    strong = get_player("strong", game_name, budget=1)
    greedy = get_player("greedy", game_name)
    for i, state in enumerate(positions(game_name, 3, 32, deals=2, seed=4)):
        seat = state.to_move
        moves = state.legal_moves()
        assert (strong.choose(state.view(seat), moves, random.Random(i))
                == greedy.choose(state.view(seat), moves, random.Random(i)))
