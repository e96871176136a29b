"""Reinforcement-learning environments on the arena's engine (the kit's ``[rl]`` extra).

- ``env(game, players=..., deck_size=...)``: a PettingZoo AEC environment of one deal;
- ``SingleAgentEnv``: a Gymnasium environment of one seat against built-in players;
- ``LinearPolicy``, ``load_policy``: a trained policy's file, and the bot that plays it
  (``cardkit play --bot policy:FILE``).

Actions, masks and observations are described in docs/rl-encoding.md.
"""

from __future__ import annotations

from typing import Any

from .encoding import DurakCodec, VolynshchikCodec, codec_for
from .policy import LinearPolicy, load_policy

_ENVIRONMENTS = ("CardGameEnv", "SingleAgentEnv", "env", "final_rewards")

# The codecs and a saved policy need numpy alone (a base dependency): a policy plays as a
# bot from the base install, and only the environments ask for the [rl] extra.
try:
    from .env import CardGameEnv, env, final_rewards
    from .single import SingleAgentEnv
except ImportError as exc:
    if exc.name not in ("gymnasium", "pettingzoo"):
        raise
    _MISSING = exc.name

    def __getattr__(name: str) -> Any:
        if name in _ENVIRONMENTS:
            raise ImportError(
                f"cardkit.rl.{name} needs {_MISSING}: pip install 'cardserver-kit[rl]'"
            )
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CardGameEnv", "DurakCodec", "LinearPolicy", "SingleAgentEnv", "VolynshchikCodec",
    "codec_for", "env", "final_rewards", "load_policy",
]
