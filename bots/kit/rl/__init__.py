"""Reinforcement-learning environments on the arena's engine (the kit's ``[rl]`` extra).

- ``env(game, players=..., deck_size=...)``: a PettingZoo AEC environment of one deal;
- ``SingleAgentEnv``: a Gymnasium environment of one seat against built-in players.

Actions, masks and observations are described in docs/rl-encoding.md.
"""

from .encoding import DurakCodec, VolynshchikCodec, codec_for
from .env import CardGameEnv, env, final_rewards
from .single import SingleAgentEnv

__all__ = [
    "CardGameEnv", "DurakCodec", "SingleAgentEnv", "VolynshchikCodec", "codec_for", "env",
    "final_rewards",
]
