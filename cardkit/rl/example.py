"""Train a linear softmax policy with REINFORCE, numpy alone, and save it as a bot.

    python -m cardkit.rl.example --game durak --opponent random --episodes 3000 \\
        --save policy.npz
    cardkit play --bot policy:policy.npz --bot greedy --games 200 --duplicate

The policy (``cardkit.rl.policy.LinearPolicy``) scores every action id as
``W @ observation + b``, masked to the legal ids (``SingleAgentEnv.action_masks()``);
after each deal every decision's log-probability gradient is scaled by the deal's reward
minus a running baseline. Before and after training it plays ``--eval`` deals on the
same seeds and prints the loss rate (the fool) of the uniform random policy and of the
trained one, each with its 95% interval; ``--save`` writes the trained policy, which
``cardkit play``, ``serve`` and ``client`` play as the bot ``policy:FILE``.

Numpy rather than sb3-contrib's MaskablePPO and torch: the kit's base install has numpy,
a linear policy trains in a few CPU seconds per thousand deals, and its file loads without
torch. The environment follows MaskablePPO's convention all the same (``action_masks``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cardkit.rl.policy import LinearPolicy
from cardkit.rl.single import SingleAgentEnv
from cardkit.stats.proportions import wilson_interval


def play(env: SingleAgentEnv, policy: LinearPolicy | None, seed: int, rng, greedy=False):
    """Play one deal; return its reward and the policy's decisions ``(x, p, action)``."""
    observation, _ = env.reset(seed=seed)
    trajectory = []
    while True:
        if policy is None:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
        else:
            action, p = policy.act(observation, None if greedy else rng)
            trajectory.append((observation["observation"].astype(np.float64), p, action))
        observation, reward, done, _, _ = env.step(action)
        if done:
            return reward, trajectory


def loss_rate(env, policy, seeds, rng, greedy=False) -> tuple[float, tuple[float, float]]:
    losses = sum(play(env, policy, seed, rng, greedy)[0] < 0 for seed in seeds)
    return losses / len(seeds), wilson_interval(losses, len(seeds))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cardkit.rl.example", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="durak", choices=["durak", "volynshchik"])
    parser.add_argument("--players", type=int, default=2, help="seats at the table (2)")
    parser.add_argument("--opponent", default="random", help="the built-in of the other seats")
    parser.add_argument("--episodes", type=int, default=4000)
    parser.add_argument("--eval", type=int, default=1000, help="deals of each evaluation")
    parser.add_argument("--rate", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", metavar="FILE", help="write the trained policy here (.npz)")
    args = parser.parse_args(argv)

    env = SingleAgentEnv(args.game, opponents=[args.opponent] * (args.players - 1), seat=None)
    rng = np.random.default_rng(args.seed)
    policy = LinearPolicy.new(args.game, players=args.players)
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
    if args.save:
        path = policy.save(args.save)
        print(f"saved the policy to {path}: play it as the bot policy:{path}")


if __name__ == "__main__":
    main()
