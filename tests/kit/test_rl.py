"""The RL environments: PettingZoo's API and seed tests, masks against the engine's legal
moves over random play, observations from the view alone, seeded deals, the single-seat
Gymnasium wrapper."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from bots.builtin.determinise import sample_world
from bots.kit.rl import SingleAgentEnv, env
from bots.kit.rl.encoding import SUBSETS
from bots.protocol import check_move
from games.engine.cards import SUITS

SHAPES = [
    ("durak", 2, 36), ("durak", 3, 36), ("durak", 4, 36),
    ("durak", 2, 32), ("durak", 3, 32), ("durak", 4, 32),
    ("volynshchik", 2, None), ("volynshchik", 3, None), ("volynshchik", 4, None),
    ("volynshchik", 5, None),
]
IDS = [f"{game}-{players}" + (f"-{deck}" if deck else "") for game, players, deck in SHAPES]
RANDOM_STEPS = 10_000


def make(game, players, deck):
    return env(game, players=players, deck_size=deck)


@pytest.mark.parametrize(("game", "players", "deck"), SHAPES, ids=IDS)
def test_pettingzoo_api_and_seed_tests_pass(game, players, deck):
    api_test(make(game, players, deck), num_cycles=200)
    seed_test(lambda: make(game, players, deck), num_cycles=200)


def expected_ids(table, state) -> set[int]:
    """The ids a mask must offer, worked out from the engine's legal moves and the view."""
    codec = table.codec
    legal = state.legal_moves()
    if codec.game == "volynshchik":
        base = {"lead": 0, "cover": 32}
        return {
            base[m["type"]] + codec.card_id[m["card"]] if "card" in m
            else (codec.take if m["type"] == "take" else codec.declare)
            for m in legal
        }
    if legal[0]["type"] == "attack":
        return {
            codec.ranks.index(m["cards"][0][0]) * SUBSETS
            + sum(1 << SUITS.index(c[1]) for c in m["cards"]) - 1
            for m in legal
        }
    order = state.view(None)["table"]
    step = len(table.pending)
    ids = {codec.take}
    for move in legal:
        if move["type"] == "beat":
            cover_of = dict(map(tuple, move["covers"]))
            if tuple(cover_of[a] for a in order[:step]) == table.pending:
                ids.add(codec.cover_base + codec.card_id[cover_of[order[step]]])
    return ids


def defence_moves(table, pending=()) -> list[dict]:
    """Every rules move reachable through the cover steps from ``pending``."""
    found = []
    for action, move in table.codec.options(table.state_.legal_moves(), pending).items():
        if move is None:
            card = table.codec.cards[action - table.codec.cover_base]
            found += defence_moves(table, (*pending, card))
        elif move["type"] == "beat" or not pending:
            found.append(move)  # take is open at every step: count it once
    return found


@pytest.mark.parametrize(("game", "players", "deck"), SHAPES, ids=IDS)
def test_random_play_masks_are_the_engines_legal_moves(game, players, deck):
    table = make(game, players, deck)
    rng = np.random.default_rng(7)
    table.reset(seed=7)
    deals = 0
    for step in range(RANDOM_STEPS):
        if table.state_.is_over:
            assert sorted(table.rewards.values()) in (
                [0.0] * players, sorted([-1.0] + [1 / (players - 1)] * (players - 1))
            )
            deals += 1
            table.reset(seed=int(rng.integers(2**31)))
        state = table.state_
        agent = table.agent_selection
        assert agent == f"player_{state.to_move}"
        mask = table.observe(agent)["action_mask"]
        assert set(np.flatnonzero(mask)) == expected_ids(table, state)
        if step % 16 == 0:
            for other in table.agents:
                if other != agent:
                    assert not table.observe(other)["action_mask"].any()
        if game == "durak" and state.phase == "defend" and not table.pending:
            reachable = defence_moves(table)
            legal = state.legal_moves()
            assert len(reachable) == len(legal)
            assert all(check_move(move, legal) == move for move in reachable)
        table.step(int(rng.choice(np.flatnonzero(mask))))
    assert deals > 5


@pytest.mark.parametrize(("game", "players", "deck"), SHAPES[::3], ids=IDS[::3])
def test_observations_carry_nothing_beyond_the_seats_view(game, players, deck):
    table, twin = make(game, players, deck), make(game, players, deck)
    rng = np.random.default_rng(3)
    table.reset(seed=3)
    checked = 0
    for step in range(400):
        if table.state_.is_over:
            table.reset(seed=int(rng.integers(2**31)))
        state = table.state_
        seat = state.to_move
        # Another deal that gives this seat the same view: other hands and talon redrawn.
        world = sample_world(state.view(seat), random.Random(step))
        if world.to_json() != state.to_json():
            twin.start(world)
            twin.pending = table.pending
            twin._refresh()
            agent = table.agent_selection
            ours, theirs = table.observe(agent), twin.observe(agent)
            assert np.array_equal(ours["observation"], theirs["observation"])
            assert np.array_equal(ours["action_mask"], theirs["action_mask"])
            checked += 1
        mask = table.observe(table.agent_selection)["action_mask"]
        table.step(int(rng.choice(np.flatnonzero(mask))))
    assert checked > 100


def test_seats_are_counted_from_the_observer():
    table = make("durak", 3, 36)
    table.reset(seed=11)
    view = {seat: table.state_.view(seat) for seat in range(3)}
    codec = table.codec
    sizes = slice(6 * 36 + 3 * 36 + 6, 6 * 36 + 3 * 36 + 6 + 3)
    attacker = slice(sizes.stop, sizes.stop + 3)
    for seat in range(3):
        observation = table.observe(f"player_{seat}")["observation"]
        assert observation[attacker][(view[seat]["attacker"] - seat) % 3] == 1.0
        hand = [codec.cards[i] for i in np.flatnonzero(observation[:36])]
        assert sorted(hand) == sorted(view[seat]["hand"])


def test_a_seeded_reset_deals_the_same_deal_again():
    first, second = make("durak", 4, 36), make("durak", 4, 36)
    first.reset(seed=5)
    second.reset(seed=5)
    assert first.state_.to_json() == second.state_.to_json()
    second.reset(seed=6)
    assert first.state_.to_json() != second.state_.to_json()


def test_the_single_seat_environment_plays_against_built_ins_to_a_reward():
    game = SingleAgentEnv("durak", opponents=["greedy", "random"])
    rewards = []
    for episode in range(20):
        observation, _ = game.reset(seed=episode)
        done = False
        while not done:
            assert game.observation_space.contains(observation)
            action = game.action_space.sample(observation["action_mask"])
            observation, reward, done, _, _ = game.step(action)
        rewards.append(reward)
    first, _ = game.reset(seed=3)
    again, _ = game.reset(seed=3)
    assert np.array_equal(first["observation"], again["observation"])
    assert set(rewards) <= {-1.0, 0.0, 0.5}
    assert -1.0 in rewards


def test_the_numpy_example_trains_and_reports_both_loss_rates(capsys):
    from bots.kit.rl.example import main

    main(["--episodes", "20", "--eval", "10"])

    printed = capsys.readouterr().out
    assert "random policy:  loss rate" in printed and "trained policy: loss rate" in printed
