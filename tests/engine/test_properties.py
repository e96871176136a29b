"""Random deals and random legal play, checked against the engine's invariants at every step."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardkit.engine import IllegalMove, load_game, load_state
from cardkit.engine.cards import deck_cards

VARIANTS = [
    ("durak", 2, 36), ("durak", 3, 36), ("durak", 4, 36),
    ("durak", 2, 32), ("durak", 3, 32), ("durak", 4, 32),
    ("volynshchik", 2, 32), ("volynshchik", 3, 32), ("volynshchik", 4, 32),
    ("volynshchik", 5, 32),
]

deals = st.tuples(
    st.sampled_from(VARIANTS),
    st.integers(min_value=0, max_value=2**32),
    st.integers(min_value=0, max_value=4),
    st.sampled_from(["lowest_trump", "dealer_left"]),
    st.randoms(use_true_random=False),
)
checked = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def start(variant, seed, dealer, opening):
    name, players, deck_size = variant
    game = load_game(name, players=players, deck_size=deck_size)
    return game, game.deal(seed=seed, dealer=dealer % players, opening=opening)


def places(state) -> list[list[str]]:
    data = state.to_json()
    if data["game"] == "durak":
        return [*data["hands"], data["talon"], data["table"], data["discard"]]
    return [*data["hands"], data["reserves"], data["pile"], data["removed"]]


def hidden_from(state, seat: int | None) -> set[str]:
    """Return the cards ``seat`` (None: a spectator) has never seen face up."""
    data = state.to_json()
    hidden: set[str] = set()
    for other, hand in enumerate(data["hands"]):
        if other != seat:
            hidden |= set(hand) - set(data["known"][other])
    if data["game"] == "durak":
        hidden |= set(data["talon"]) - {data["trump_card"]}
    else:
        for other, card in enumerate(data["reserves"]):
            if other != seat and other not in data["declared"]:
                hidden.add(card)
    return hidden


def normal(move: dict) -> str:
    move = dict(move)
    if "cards" in move:
        move["cards"] = sorted(move["cards"])
    if "covers" in move:
        move["covers"] = sorted(map(list, move["covers"]))
    return json.dumps(move, sort_keys=True)


def candidate_moves(state, rng: random.Random) -> list[dict]:
    """Return moves of every shape, most of them illegal, to probe the rules."""
    cards = deck_cards(state.game.deck_size)
    hand = state.hand(state.to_move)
    pick = lambda k: rng.sample(hand, min(k, len(hand)))  # noqa: E731
    if state.game.name == "durak":
        table = state.view(None)["table"]
        return [
            {"type": "attack", "cards": pick(1)},
            {"type": "attack", "cards": pick(2)},
            {"type": "attack", "cards": [rng.choice(cards)]},
            {"type": "attack", "cards": []},
            {"type": "beat", "covers": [[a, rng.choice(hand)] for a in table] or [["6S", "7S"]]},
            {"type": "beat",
             "covers": [[a, rng.choice(cards)] for a in table[:1]] or [["6S", "7S"]]},
            {"type": "take"},
            {"type": "lead", "card": rng.choice(cards)},
        ]
    return [
        {"type": "lead", "card": rng.choice(hand)},
        {"type": "lead", "card": rng.choice(cards)},
        {"type": "cover", "card": rng.choice(hand)},
        {"type": "cover", "card": rng.choice(cards)},
        {"type": "take"},
        {"type": "declare"},
        {"type": "attack", "cards": pick(1)},
    ]


@checked
@given(deals)
def test_every_card_is_in_exactly_one_place_at_every_step(deal):
    variant, seed, dealer, opening, rng = deal
    game, state = start(variant, seed, dealer, opening)
    full = sorted(deck_cards(game.deck_size))
    while True:
        assert sorted(c for place in places(state) for c in place) == full
        if state.is_over:
            break
        state = state.play(rng.choice(state.legal_moves()))


@checked
@given(deals)
def test_every_deal_ends_and_legal_moves_are_never_empty_before_the_end(deal):
    variant, seed, dealer, opening, rng = deal
    _game, state = start(variant, seed, dealer, opening)
    while not state.is_over:
        moves = state.legal_moves()
        assert moves, state
        assert state.to_move is not None
        state = state.play(rng.choice(moves))
    assert state.legal_moves() == []
    assert state.to_move is None
    assert state.ply <= 1000
    result = state.result
    assert set(result) == {"loser", "out_order"}
    assert result["loser"] not in result["out_order"]


@checked
@given(deals)
def test_a_view_never_shows_a_card_its_seat_cannot_see(deal):
    variant, seed, dealer, opening, rng = deal
    game, state = start(variant, seed, dealer, opening)
    while not state.is_over:
        for seat in [*range(game.players), None]:
            text = json.dumps(state.view(seat))
            hidden = hidden_from(state, seat)
            leaked = [card for card in hidden if f'"{card}"' in text]
            assert not leaked, (seat, leaked, state)
        state = state.play(rng.choice(state.legal_moves()))


@checked
@given(deals)
def test_a_move_not_in_legal_moves_is_refused_and_changes_nothing(deal):
    variant, seed, dealer, opening, rng = deal
    _game, state = start(variant, seed, dealer, opening)
    while not state.is_over:
        legal = {normal(m) for m in state.legal_moves()}
        before = state.to_json()
        for move in candidate_moves(state, rng):
            if normal(move) in legal:
                state.play(move)
            else:
                try:
                    state.play(move)
                except IllegalMove:
                    pass
                else:
                    raise AssertionError(f"{move} was accepted but is not legal in {state!r}")
        assert state.to_json() == before
        state = state.play(rng.choice(state.legal_moves()))


@checked
@given(deals)
def test_a_move_of_cards_is_the_same_move_in_any_order(deal):
    variant, seed, dealer, opening, rng = deal
    _game, state = start(variant, seed, dealer, opening)
    while not state.is_over:
        move = rng.choice(state.legal_moves())
        shuffled = json.loads(json.dumps(move))
        for key in ("cards", "covers"):
            if key in shuffled:
                rng.shuffle(shuffled[key])
        assert state.play(shuffled) == state.play(move)
        state = state.play(move)


@checked
@given(deals)
def test_replaying_the_move_list_reproduces_every_state(deal):
    variant, seed, dealer, opening, rng = deal
    game, state = start(variant, seed, dealer, opening)
    states = [state]
    while not state.is_over:
        state = state.play(rng.choice(state.legal_moves()))
        states.append(state)
    moves = state.moves()
    replayed = game.deal(seed=seed, dealer=dealer % game.players, opening=opening)
    for ply, move in enumerate(moves):
        assert replayed == states[ply]
        replayed = replayed.play(move)
    assert replayed == state
    assert replayed.result == state.result


@checked
@given(deals)
def test_a_state_survives_json_and_plays_on_identically(deal):
    variant, seed, dealer, opening, rng = deal
    _game, state = start(variant, seed, dealer, opening)
    while not state.is_over:
        restored = load_state(json.loads(json.dumps(state.to_json())))
        assert restored == state
        assert restored.legal_moves() == state.legal_moves()
        move = rng.choice(state.legal_moves())
        assert restored.play(move) == state.play(move)
        state = state.play(move)
