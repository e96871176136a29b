"""A trained policy as a file, and as a bot that plays from it.

    policy = LinearPolicy.new("durak", players=2)      # train it: cardkit.rl.example
    policy.save("policy.npz")
    choose = load_policy("policy.npz").choose          # choose(view, legal_moves)

    cardkit play --bot policy:policy.npz --bot greedy --games 200 --duplicate
    cardkit serve policy:policy.npz --port 9001 --secret S

The policy scores every action id of the table's codec (docs/rl-encoding.md) as
``W @ observation + b`` and plays the best legal one; a Durak defence is chosen one cover
step at a time, as the environment offers it. The file is a numpy ``.npz`` of ``w``, ``b``
and ``meta`` (the format, game, players and deck size as JSON), read without pickle.

This module needs numpy alone (a base dependency of the kit): a saved policy plays
without the ``[rl]`` extra.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .encoding import codec_for

FORMAT = "cardkit-linear-policy/1"
TRAIN = "train one with: python -m cardkit.rl.example --save FILE"


class LinearPolicy:
    """A softmax over ``w @ observation + b``, masked to the legal action ids."""

    def __init__(
        self, game: str, players: int, deck_size: int | None, w: np.ndarray, b: np.ndarray
    ) -> None:
        self.codec = codec_for(game, players, deck_size)
        self.game = game
        self.players = players
        self.deck_size = self.codec.deck_size
        shape = (self.codec.size, self.codec.observation_size)
        if w.shape != shape or b.shape != (self.codec.size,):
            raise ValueError(
                f"weights of shape {w.shape}, {b.shape} do not fit {game} with {players} "
                f"players (expected {shape}, ({self.codec.size},))"
            )
        self.w = w.astype(np.float64)
        self.b = b.astype(np.float64)

    @classmethod
    def new(cls, game: str, *, players: int, deck_size: int | None = None) -> LinearPolicy:
        """Return an untrained policy (uniform over the legal ids) for the table."""
        codec = codec_for(game, players, deck_size)
        return cls(
            game, players, codec.deck_size,
            np.zeros((codec.size, codec.observation_size)), np.zeros(codec.size),
        )  # fmt: skip

    # -- choosing -----------------------------------------------------------------------

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Return the softmax over the ids that ``mask`` marks legal (0 elsewhere)."""
        logits = self.w @ observation + self.b
        logits = np.where(mask > 0, logits, -np.inf)
        logits -= logits.max()
        weights = np.exp(logits)
        return weights / weights.sum()

    def act(
        self, observation: dict, rng: np.random.Generator | None = None
    ) -> tuple[int, np.ndarray]:
        """Return ``(action id, probabilities)`` for an environment's observation: a draw
        from the softmax with ``rng``, its most likely id without."""
        p = self.probabilities(
            observation["observation"].astype(np.float64), observation["action_mask"]
        )
        action = int(np.argmax(p)) if rng is None else int(rng.choice(len(p), p=p))
        return action, p

    def update(self, trajectory: list, advantage: float, rate: float) -> None:
        """REINFORCE: move every decision's log-probability by ``rate * advantage``."""
        for x, p, action in trajectory:
            gradient = -p
            gradient[action] += 1.0
            self.w += rate * advantage * np.outer(gradient, x)
            self.b += rate * advantage * gradient

    def choose(self, view: dict, legal_moves: list[dict]) -> dict:
        """Return the policy's move of ``legal_moves`` for a seat's ``view`` (a bot's
        ``choose``); raise ValueError at a table the policy was not trained for."""
        table = (view.get("game"), view.get("players"), view.get("deck_size"))
        if table != (self.game, self.players, self.deck_size):
            raise ValueError(
                f"this policy plays {self.game} with {self.players} players and "
                f"{self.deck_size} cards, not {table[0]} with {table[1]} and {table[2]}"
            )
        codec = self.codec
        pending: tuple[str, ...] = ()
        while True:
            options = codec.options(legal_moves, pending)
            if not options:
                raise ValueError("no legal move to choose from")
            mask = np.zeros(codec.size, dtype=np.int8)
            mask[list(options)] = 1
            action, _ = self.act({"observation": codec.observe(view, pending),
                                  "action_mask": mask})  # fmt: skip
            move = options[action]
            if move is not None:
                return move
            # One cover step of a Durak defence: choose the next attack card's cover.
            pending = (*pending, codec.cards[action - codec.cover_base])

    # -- the file -----------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the policy to ``path`` (``.npz``); return the path written."""
        path = Path(path)
        meta = {"format": FORMAT, "game": self.game, "players": self.players,
                "deck_size": self.deck_size}  # fmt: skip
        with path.open("wb") as out:
            np.savez_compressed(out, w=self.w, b=self.b, meta=np.array(json.dumps(meta)))
        return path


def load_policy(path: str | Path) -> LinearPolicy:
    """Return the policy saved at ``path``; raise ValueError for a file that is not one."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no such policy file: {path}; {TRAIN}")
    try:
        with np.load(path, allow_pickle=False) as saved:
            meta = json.loads(str(saved["meta"]))
            w, b = saved["w"], saved["b"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path} is not a policy file ({exc}); {TRAIN}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not a policy of format {FORMAT}; {TRAIN}")
    return LinearPolicy(meta["game"], int(meta["players"]), meta.get("deck_size"), w, b)
