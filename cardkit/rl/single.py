"""One seat against built-in players, as a Gymnasium environment.

    >>> from cardkit.rl import SingleAgentEnv
    >>> game = SingleAgentEnv("durak", opponents=["random"])
    >>> observation, info = game.reset(seed=1)
    >>> action = game.action_space.sample(observation["action_mask"])
    >>> observation, reward, terminated, truncated, info = game.step(action)
    >>> game = gymnasium.make("cardkit/Durak-v0", opponents=["greedy"])   # the same

The learner's seat is ``seat`` (or drawn at each reset when None); the others are played
by the built-in players named in ``opponents`` (``random``, ``greedy``, ``strong``), which
choose from their seat's view with generators seeded from the reset's seed. The reward
is the learner's share of the rules' result (``final_rewards``), given when the deal ends.

``action_masks()`` returns the legal ids as booleans (sb3-contrib's MaskablePPO asks for
it by that name); the observation's ``action_mask`` holds the same as int8. An action that
is not legal forfeits the deal, as an illegal move forfeits a match on the arena: the
episode ends with the loser's reward, -1, and ``info["illegal_action"]`` set. So every
action of the space is a valid input to ``step``, which Gymnasium's ``check_env`` asks.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from cardkit.players import decision_rng, get_player

from .env import CardGameEnv


class SingleAgentEnv(gymnasium.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        game: str = "durak",
        *,
        opponents: list[str] | tuple[str, ...] = ("random",),
        seat: int | None = 0,
        deck_size: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        players = len(opponents) + 1
        self.table = CardGameEnv(game, players=players, deck_size=deck_size,
                                 render_mode=render_mode)
        self.render_mode = render_mode
        self.fixed_seat = seat
        self.seat = 0 if seat is None else seat
        self.agent = self.table.possible_agents[self.seat]
        self._names = list(opponents)
        self._players: list = []
        self.observation_space = self.table.observation_space(self.agent)
        self.action_space = self.table.action_space(self.agent)
        self._deal = "0"
        self._forfeited = False

    # The reward of a seat that forfeits: the fool's (final_rewards).
    FORFEIT_REWARD = -1.0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.table.np_random = self.np_random
        self.table.reset()
        players = self.table.game.players
        if self.fixed_seat is None:
            self.seat = int(self.np_random.integers(0, players))
        self.agent = self.table.possible_agents[self.seat]
        others = [seat for seat in range(players) if seat != self.seat]
        self._players = {
            seat: get_player(name, self.table.codec.game) for seat, name in zip(
                others, self._names, strict=True)
        }
        self._deal = str(int(self.np_random.integers(0, 2**63 - 1)))
        self._forfeited = False
        self._opponents_play()
        return self._observe(), {}

    def _opponents_play(self) -> None:
        table = self.table
        while not table.state_.is_over and table.state_.to_move != self.seat:
            state = table.state_
            seat = state.to_move
            rng = decision_rng(self._deal, seat, state.ply)
            table.play_move(self._players[seat].choose(state.view(seat), state.legal_moves(), rng))

    def step(self, action: int):
        table = self.table
        if self._over():
            raise RuntimeError("the deal is over: call reset() before step()")
        if int(action) not in table.legal_actions():
            self._forfeited = True
            return self._observe(), self.FORFEIT_REWARD, True, False, {"illegal_action": True}
        table.step(int(action))
        self._opponents_play()
        terminated = table.state_.is_over
        reward = table._cumulative_rewards[self.agent] if terminated else 0.0
        return self._observe(), float(reward), terminated, False, {}

    def action_masks(self) -> np.ndarray:
        """Return the legal action ids now as a boolean vector (all False once over)."""
        mask = np.zeros(self.action_space.n, dtype=bool)
        if not self._over():
            mask[self.table.legal_actions()] = True
        return mask

    def _over(self) -> bool:
        return self._forfeited or self.table.state_.is_over

    def _observe(self) -> dict[str, np.ndarray]:
        observation = self.table.observe(self.agent)
        if self._forfeited:
            observation["action_mask"][:] = 0
        return observation

    def render(self) -> str | None:
        return self.table.render()

    def legal_actions(self) -> list[int]:
        return self.table.legal_actions()


def make(game: str = "durak", **options: Any) -> SingleAgentEnv:
    return SingleAgentEnv(game, **options)


# gymnasium.make("cardkit/Durak-v0", opponents=["greedy"]) gives the environment a spec,
# which Gymnasium's checker and vector environments use to make more of it.
for _game in ("durak", "volynshchik"):
    gymnasium.register(
        id=f"cardkit/{_game.capitalize()}-v0", entry_point=SingleAgentEnv,
        kwargs={"game": _game},
    )
