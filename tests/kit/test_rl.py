"""The RL environments: PettingZoo's API and seed tests, masks against the engine's legal
moves over random play, observations from the view alone, seeded deals, the single-seat
Gymnasium wrapper."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from cardkit.engine.cards import SUITS
from cardkit.players.determinise import sample_world
from cardkit.protocol import check_move
from cardkit.rl import SingleAgentEnv, env
from cardkit.rl.encoding import SUBSETS

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
    from cardkit.rl.example import main

    main(["--game", "durak", "--opponent", "random", "--episodes", "20", "--eval", "10"])

    printed = capsys.readouterr().out
    assert "random policy:  loss rate" in printed and "trained policy: loss rate" in printed


# -- Gymnasium's checker, action masks, a saved policy as a bot ----------------------------

SINGLE_TABLES = [("durak", ["random"]), ("durak", ["greedy", "random"]),
                 ("volynshchik", ["greedy", "greedy", "random"])]  # fmt: skip


@pytest.mark.parametrize(("game", "opponents"), SINGLE_TABLES, ids=["durak-2", "durak-3", "vol-4"])
def test_gymnasiums_check_env_passes_with_no_warning(game, opponents):
    import warnings

    import gymnasium
    from gymnasium.utils.env_checker import check_env

    made = gymnasium.make(f"cardkit/{game.capitalize()}-v0", opponents=opponents, seat=None,
                          disable_env_checker=True)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # With its spec, the checker also makes the environment again to render it.
        check_env(made.unwrapped)


@pytest.mark.parametrize(("game", "opponents"), SINGLE_TABLES, ids=["durak-2", "durak-3", "vol-4"])
def test_action_masks_are_the_legal_moves_of_the_learners_seat(game, opponents):
    single = SingleAgentEnv(game, opponents=opponents, seat=None)
    rng = np.random.default_rng(5)
    checked = 0
    for episode in range(15):
        observation, _ = single.reset(seed=episode)
        done = False
        while not done:
            state = single.table.state_
            masks = single.action_masks()
            assert masks.dtype == bool and masks.shape == (single.action_space.n,)
            assert state.to_move == single.seat
            assert set(np.flatnonzero(masks)) == expected_ids(single.table, state)
            assert np.array_equal(masks, observation["action_mask"].astype(bool))
            checked += 1
            observation, _, done, _, _ = single.step(int(rng.choice(np.flatnonzero(masks))))
        assert not single.action_masks().any()
    assert checked > 200


def test_an_illegal_action_forfeits_the_deal_with_the_losers_reward():
    single = SingleAgentEnv("durak", opponents=["random"])
    single.reset(seed=2)
    illegal = int(np.flatnonzero(~single.action_masks())[0])

    observation, reward, terminated, truncated, info = single.step(illegal)

    assert (reward, terminated, truncated, info) == (-1.0, True, False, {"illegal_action": True})
    assert not observation["action_mask"].any() and not single.action_masks().any()
    with pytest.raises(RuntimeError, match="call reset"):
        single.step(illegal)


def trained_policy(game="durak", players=2, episodes=30):
    from cardkit.rl.example import play
    from cardkit.rl.policy import LinearPolicy

    single = SingleAgentEnv(game, opponents=["random"] * (players - 1), seat=None)
    policy = LinearPolicy.new(game, players=players)
    rng = np.random.default_rng(0)
    for episode in range(episodes):
        reward, trajectory = play(single, policy, episode, rng)
        policy.update(trajectory, reward, 0.05)
    return policy


@pytest.mark.parametrize(("game", "players"), [("durak", 3), ("volynshchik", 2)])
def test_the_policy_bot_plays_the_move_the_environment_would_take_from_it(game, players):
    policy = trained_policy(game, players)
    single = SingleAgentEnv(game, opponents=["random"] * (players - 1), seat=None)
    compared = 0
    for episode in range(5):
        observation, _ = single.reset(seed=100 + episode)
        while not single.table.state_.is_over:
            state = single.table.state_
            move = policy.choose(state.view(single.seat), state.legal_moves())
            # The environment's steps for one rules move (several for a Durak defence).
            while single.table.state_ is state:
                action, _ = policy.act(observation)
                observation, *_ = single.step(action)
            played = single.table.state_.history()[state.ply]
            assert played["seat"] == single.seat
            assert check_move(move, [played["move"]]) == played["move"]
            compared += 1
    assert compared > 30


def test_a_saved_policy_loads_and_plays_whole_matches_as_the_bot_policy_file(tmp_path, capsys):
    from cardkit.cli import main
    from cardkit.rl.policy import load_policy

    trained = trained_policy("durak", 3)
    path = trained.save(tmp_path / "p.npz")
    loaded = load_policy(path)

    status = main(["play", "--players", "3", "--bot", f"policy:{path}", "--bot", "greedy",
                   "--bot", "random", "--games", "4", "--duplicate"])  # fmt: skip

    assert np.array_equal(loaded.w, trained.w) and np.array_equal(loaded.b, trained.b)
    assert status == 0  # a forfeit (an illegal move, an exception) exits 1
    table = capsys.readouterr().out
    assert "12 deals of durak" in table and "policy:p.npz" in table


def test_the_policy_bot_is_served_over_http_and_plays_the_local_arena(tmp_path, capsys):
    from cardkit.cli import main
    from cardkit.server import make_server
    from cardkit.specs import load_bot

    path = trained_policy("durak", 2).save(tmp_path / "policy.npz")
    answer, close = load_bot(f"policy:{path}")
    server = make_server(None, 0, "policy-secret", answer=answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        status = main(["play", "--bot", url, "--bot", "greedy", "--secret", "policy-secret",
                       "--games", "2", "--duplicate"])  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
        close()

    assert status == 0  # a forfeit (a fault of the served bot) exits 1
    assert "4 deals of durak" in capsys.readouterr().out


def test_a_policy_at_a_table_it_was_not_trained_for_names_both_tables(tmp_path):
    from cardkit.engine import load_game
    from cardkit.rl.policy import load_policy

    policy = load_policy(trained_policy("durak", 2, episodes=1).save(tmp_path / "p.npz"))
    state = load_game("durak", players=3).deal(seed=1, dealer=0)

    with pytest.raises(ValueError, match="plays durak with 2 players and 36 cards, not durak "
                                         "with 3 and 36"):  # fmt: skip
        policy.choose(state.view(state.to_move), state.legal_moves())


@pytest.mark.parametrize("content", [None, b"not a zip", b"PK\x03\x04 broken"])
def test_a_missing_or_foreign_policy_file_is_a_usage_error_of_one_line(tmp_path, capsys, content):
    from cardkit.cli import main

    path = tmp_path / "policy.npz"
    if content is not None:
        path.write_bytes(content)

    with pytest.raises(SystemExit) as exit_:
        main(["play", "--bot", f"policy:{path}", "--bot", "random"])

    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "policy" in error and "python -m cardkit.rl.example --save FILE" in error
