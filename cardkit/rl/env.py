"""PettingZoo AEC environments of Durak (2-4 players, 36 or 32 cards) and Volynshchik (2-5).

    >>> from cardkit.rl import env
    >>> game = env("durak", players=3)
    >>> game.reset(seed=1)
    >>> for agent in game.agent_iter():
    ...     observation, reward, termination, truncation, info = game.last()
    ...     mask = observation["action_mask"]
    ...     game.step(None if termination or truncation else game.action_space(agent).sample(mask))

The deal is played by the arena's engine. An observation is ``{"observation": float32
vector of the seat's view, "action_mask": int8}`` (docs/rl-encoding.md). The rewards come
at the end of the deal from the rules' result: the fool gets -1 and every other seat
+1/(players - 1); a drawn deal gives 0 to all. ``reset(seed=s)`` deals the same deck for
the same ``s``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from cardkit.engine import load_game

from .encoding import codec_for


def final_rewards(result: dict | None, players: int) -> list[float]:
    """Return each seat's reward for a finished deal's ``result``."""
    loser = None if result is None else result.get("loser")
    if loser is None:
        return [0.0] * players
    return [-1.0 if seat == loser else 1.0 / (players - 1) for seat in range(players)]


class CardGameEnv(AECEnv):
    """One deal of Durak or Volynshchik as an AEC environment; agents ``player_<seat>``."""

    metadata = {"name": "cardgame_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        game: str = "durak",
        *,
        players: int = 2,
        deck_size: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        options: dict[str, Any] = {"players": players}
        if deck_size is not None:
            options["deck_size"] = deck_size
        self.game = load_game(game, **options)
        self.codec = codec_for(game, players, self.game.deck_size)
        self.metadata = {**self.metadata, "name": f"{game}_v0"}
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation = spaces.Box(0.0, 1.0, (self.codec.observation_size,), np.float32)
        mask = spaces.Box(0, 1, (self.codec.size,), np.int8)
        self._observation_spaces = {
            agent: spaces.Dict({"observation": observation, "action_mask": mask})
            for agent in self.possible_agents
        }
        self._action_spaces = {
            agent: spaces.Discrete(self.codec.size) for agent in self.possible_agents
        }
        self.state_ = None
        self.pending: tuple[str, ...] = ()
        self._options: dict[int, dict | None] = {}

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    # -- the deal ---------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or not hasattr(self, "np_random"):
            self.np_random, _ = seeding.np_random(seed)
        # The deck comes from the engine's own seeded shuffle, so a seed names a deal.
        deck_seed = int(self.np_random.integers(0, 2**63 - 1))
        dealer = int(self.np_random.integers(0, self.game.players))
        self.start(self.game.deal(seed=deck_seed, dealer=dealer))

    def start(self, state) -> None:
        """Begin from the engine ``state`` (a deal not yet over)."""
        self.state_ = state
        self.pending = ()
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._refresh()

    def _refresh(self) -> None:
        state = self.state_
        if state.is_over:
            self._options = {}
            return
        self._options = self.codec.options(state.legal_moves(), self.pending)
        self.agent_selection = self.possible_agents[state.to_move]

    def legal_actions(self) -> list[int]:
        """Return the ids legal for the agent to act, in increasing order."""
        return sorted(self._options)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or int(action) not in self._options:
            raise ValueError(
                f"action {action} is not legal for {agent}; legal: {self.legal_actions()}"
            )
        action = int(action)
        move = self._options[action]
        if move is None:
            # One more cover of a Durak defence: the defender acts again.
            self._cumulative_rewards[agent] = 0.0
            self.pending = (*self.pending, self.codec.cards[action - self.codec.cover_base])
            self.rewards = {name: 0.0 for name in self.agents}
            self._refresh()
            self._accumulate_rewards()
            return
        self.play_move(move)

    def play_move(self, move: dict) -> None:
        """Play a whole rules move (one of ``legal_moves``) for the agent to act."""
        self._cumulative_rewards[self.agent_selection] = 0.0
        self.state_ = self.state_.play(move)
        self.pending = ()
        self.rewards = {name: 0.0 for name in self.agents}
        if self.state_.is_over:
            rewards = final_rewards(self.state_.result, self.game.players)
            for name in self.agents:
                self.rewards[name] = rewards[self._seat[name]]
                self.terminations[name] = True
        self._refresh()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        view = self.state_.view(seat)
        mine = not self.state_.is_over and self.state_.to_move == seat
        pending = self.pending if mine else ()
        mask = np.zeros(self.codec.size, dtype=np.int8)
        if mine:
            mask[list(self._options)] = 1
        return {"observation": self.codec.observe(view, pending), "action_mask": mask}

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        view = self.state_.view(None)
        view.pop("history", None)
        return repr(view) + (f" pending covers {list(self.pending)}" if self.pending else "")

    def close(self) -> None:
        pass


def env(game: str = "durak", **options: Any) -> CardGameEnv:
    """Return the AEC environment of ``game`` (``players``, ``deck_size``, ``render_mode``)."""
    return CardGameEnv(game, **options)
