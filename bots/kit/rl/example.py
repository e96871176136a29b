"""Train a linear softmax policy with REINFORCE, numpy alone, against a built-in player.

    python -m bots.kit.rl.example --game durak --opponent random --episodes 4000

The policy scores every action id as ``W @ observation + b``, masked to the legal ids;
after each deal every decision's log-probability gradient is scaled by the deal's reward
minus a running baseline. Before and after training it plays ``--eval`` deals on the
same seeds and prints the loss rate (the fool) of the uniform random policy and of the
trained one, each with its 95% interval.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bots.kit.arena import wilson_interval
from bots.kit.rl.single import SingleAgentEnv


class LinearPolicy:
    def __init__(self, actions: int, features: int, rng: np.random.Generator) -> None:
        self.w = np.zeros((actions, features), dtype=np.float64)
        self.b = np.zeros(actions, dtype=np.float64)
        self.rng = rng

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = self.w @ observation + self.b
        logits = np.where(mask > 0, logits, -np.inf)
        logits -= logits.max()
        weights = np.exp(logits)
        return weights / weights.sum()

    def act(self, observation: dict, greedy: bool = False) -> tuple[int, np.ndarray]:
        x = observation["observation"].astype(np.float64)
        p = self.probabilities(x, observation["action_mask"])
        action = int(np.argmax(p)) if greedy else int(self.rng.choice(len(p), p=p))
        return action, p

    def update(self, trajectory: list, advantage: float, rate: float) -> None:
        for x, p, action in trajectory:
            gradient = -p
            gradient[action] += 1.0
            self.w += rate * advantage * np.outer(gradient, x)
            self.b += rate * advantage * gradient


def play(env: SingleAgentEnv, policy: LinearPolicy | None, seed: int, rng, greedy=False):
    observation, _ = env.reset(seed=seed)
    trajectory = []
    while True:
        if policy is None:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        else:
            action, p = policy.act(observation, greedy)
            trajectory.append((observation["observation"].astype(np.float64), p, action))
        observation, reward, done, _, _ = env.step(action)
        if done:
            return reward, trajectory


def loss_rate(env, policy, seeds, rng, greedy=False) -> tuple[float, tuple[float, float]]:
    losses = sum(play(env, policy, seed, rng, greedy)[0] < 0 for seed in seeds)
    return losses / len(seeds), wilson_interval(losses, len(seeds))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bots.kit.rl.example", description=__doc__)
    parser.add_argument("--game", default="durak", choices=["durak", "volynshchik"])
    parser.add_argument("--opponent", default="random")
    parser.add_argument("--episodes", type=int, default=4000)
    parser.add_argument("--eval", type=int, default=1000, help="deals of each evaluation")
    parser.add_argument("--rate", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = SingleAgentEnv(args.game, opponents=[args.opponent], seat=None)
    rng = np.random.default_rng(args.seed)
    size = env.observation_space["observation"].shape[0]
    policy = LinearPolicy(env.action_space.n, size, rng)
    seeds = [10**6 + k for k in range(args.eval)]
    before, (low, high) = loss_rate(env, None, seeds, rng)
    print(f"random policy:  loss rate {before:.1%} ({low:.1%} - {high:.1%}) over {args.eval}")
    started = time.perf_counter()
    baseline = 0.0
    for episode in range(args.episodes):
        reward, trajectory = play(env, policy, args.seed * 10**7 + episode, rng)
        policy.update(trajectory, reward - baseline, args.rate)
        baseline += 0.01 * (reward - baseline)
        if (episode + 1) % 1000 == 0:
            print(f"  {episode + 1} deals trained, {time.perf_counter() - started:.0f} s")
    after, (low, high) = loss_rate(env, policy, seeds, rng, greedy=True)
    print(f"trained policy: loss rate {after:.1%} ({low:.1%} - {high:.1%}) over {args.eval}")
    print(f"training took {time.perf_counter() - started:.0f} s for {args.episodes} deals")


if __name__ == "__main__":
    main()
