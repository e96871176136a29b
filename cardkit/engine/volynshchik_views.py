"""What a Volynshchik state shows and how it is stored: ``view``, ``reveal``, ``to_json``
and back. A base of ``volynshchik.VolynshchikState``, which holds the play.

It imports nothing of ``volynshchik``: the game module builds on its views, never the reverse.
"""

from __future__ import annotations

from typing import Self

from .base import DealGame, check_cards_once
from .cards import CARD_INDEX, CARD_NAMES, mask_of, names
from .volynshchik_rules import DECK_SIZE, PHASE_NAMES


class VolynshchikViews:
    """The views and the serialisation of ``VolynshchikState`` (no slots of its own)."""

    __slots__ = ()

    def view(self, seat: int | None = None) -> dict:
        """Return what ``seat`` may see (None: a spectator), plus the public history.

        Hidden: other hands (except cards everyone saw taken into them) and every
        reserve card that its owner has not turned up by declaring.
        """
        self._check_seat(seat)
        players = self._game.players
        revealed = [
            CARD_NAMES[self._reserves[other]] if self._declared >> other & 1 else None
            for other in range(players)
        ]
        view = {
            "game": "volynshchik",
            "players": players,
            "deck_size": DECK_SIZE,
            "seat": seat,
            "dealer": self._dealer,
            "phase": PHASE_NAMES[self._phase],
            "to_move": self.to_move,
            "hand_sizes": [hand.bit_count() for hand in self._hands],
            "pile": [CARD_NAMES[card] for card in self._pile],
            "removed": names(self._removed),
            "declared": [card[1] if card else None for card in revealed],
            "revealed_reserves": revealed,
            **self._progress_view(),
        }
        if seat is not None:
            view["hand"] = names(self._hands[seat])
            view["reserve"] = CARD_NAMES[self._reserves[seat]]
        return view

    def reveal(self) -> dict:
        """Return every hand and reserve card: for finished matches only."""
        view = self.view(None)
        view["hands"] = [names(hand) for hand in self._hands]
        view["reserves"] = [CARD_NAMES[card] for card in self._reserves]
        return view

    def to_json(self) -> dict:
        """Return everything needed to rebuild this state exactly (hidden cards included)."""
        return {
            "game": "volynshchik",
            "options": self._game.options,
            "dealer": self._dealer,
            "hands": [names(hand) for hand in self._hands],
            "known": [names(known) for known in self._known],
            "reserves": [CARD_NAMES[card] for card in self._reserves],
            "declared": [
                seat for seat in range(self._game.players) if self._declared >> seat & 1
            ],
            "pile": [CARD_NAMES[card] for card in self._pile],
            "removed": names(self._removed),
            "phase": PHASE_NAMES[self._phase],
            "to_move": self._to_move,
            **self._progress_json(),
        }

    @classmethod
    def _from_json(cls, game: DealGame, data: dict) -> Self:
        try:
            state = cls.__new__(cls)
            state._game = game
            state._dealer = data["dealer"]
            state._hands = tuple(mask_of(hand) for hand in data["hands"])
            state._known = tuple(mask_of(known) for known in data["known"])
            state._reserves = tuple(CARD_INDEX[card] for card in data["reserves"])
            state._declared = sum(1 << seat for seat in data["declared"])
            state._pile = tuple(CARD_INDEX[card] for card in data["pile"])
            state._removed = mask_of(data["removed"])
            state._phase = PHASE_NAMES.index(data["phase"])
            state._to_move = data["to_move"]
            state._restore_progress(data)
            check_cards_once(
                [*data["hands"], data["reserves"], data["pile"], data["removed"]], DECK_SIZE
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a serialised Volynshchik state: {exc!r}") from exc
        return state

    def __repr__(self) -> str:
        return (
            f"<VolynshchikState ply={self._ply} {PHASE_NAMES[self._phase]} "
            f"to_move={self.to_move} hands={[names(hand) for hand in self._hands]} "
            f"pile={[CARD_NAMES[card] for card in self._pile]}>"
        )
