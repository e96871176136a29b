"""What a Durak state shows and how it is stored: ``view``, ``reveal``, ``to_json`` and
back. A base of ``durak.DurakState``, which holds the play.

It imports nothing of ``durak``: the game module builds on its views, never the reverse.
"""

from __future__ import annotations

from typing import Self

from .base import OVER, DealGame, check_cards_once
from .cards import CARD_INDEX, CARD_NAMES, SUITS, mask_of, names, popcount, suit_of
from .durak_rules import HAND_SIZE, PHASE_NAMES


class DurakViews:
    """The views and the serialisation of ``DurakState`` (no slots of its own)."""

    __slots__ = ()

    def view(self, seat: int | None = None) -> dict:
        """Return what ``seat`` may see (None: a spectator), plus the public history.

        Hidden: other hands (except cards everyone saw go into them), the talon order.
        """
        self._check_seat(seat)
        players = self._game.players
        view = {
            "game": "durak",
            "players": players,
            "deck_size": self._game.deck_size,
            "seat": seat,
            "dealer": self._dealer,
            "trump_suit": SUITS[self._trump],
            "trump_card": CARD_NAMES[self._trump_card],
            "phase": PHASE_NAMES[self._phase],
            "to_move": self.to_move,
            "attacker": None if self._phase == OVER else self._attacker,
            "defender": None if self._phase == OVER else self._defender,
            "hand_sizes": [popcount(hand) for hand in self._hands],
            "talon_size": len(self._talon) - self._drawn,
            "table": names(self._table),
            "discard": names(self._discard),
            **self._progress_view(),
        }
        if seat is not None:
            view["hand"] = names(self._hands[seat])
        return view

    def reveal(self) -> dict:
        """Return the whole table, every hand and the talon: for finished matches only."""
        view = self.view(None)
        view["hands"] = [names(hand) for hand in self._hands]
        view["talon"] = [CARD_NAMES[card] for card in self._talon[self._drawn:]]
        return view

    def to_json(self) -> dict:
        """Return everything needed to rebuild this state exactly (hidden cards included)."""
        return {
            "game": "durak",
            "options": self._game.options,
            "dealer": self._dealer,
            "opening": self._opening,
            "hands": [names(hand) for hand in self._hands],
            "known": [names(known) for known in self._known],
            "talon": [CARD_NAMES[card] for card in self._talon[self._drawn:]],
            "trump_card": CARD_NAMES[self._trump_card],
            "table": names(self._table),
            "discard": names(self._discard),
            "phase": PHASE_NAMES[self._phase],
            "attacker": self._attacker,
            "defender": self._defender,
            **self._progress_json(),
        }

    @classmethod
    def _from_json(cls, game: DealGame, data: dict) -> Self:
        try:
            state = cls.__new__(cls)
            state._game = game
            state._dealer = data["dealer"]
            state._opening = data["opening"]
            state._hands = tuple(mask_of(hand) for hand in data["hands"])
            state._known = tuple(mask_of(known) for known in data["known"])
            state._trump_card = CARD_INDEX[data["trump_card"]]
            state._trump = suit_of(state._trump_card)
            talon = tuple(CARD_INDEX[card] for card in data["talon"])
            drawn = game.deck_size - HAND_SIZE * game.players - len(talon)
            # Drawn cards are gone from the talon; keep their count, a part of each position.
            state._talon = (-1,) * drawn + talon
            state._drawn = drawn
            state._table = mask_of(data["table"])
            state._discard = mask_of(data["discard"])
            state._phase = PHASE_NAMES.index(data["phase"])
            state._attacker = data["attacker"]
            state._defender = data["defender"]
            state._restore_progress(data)
            check_cards_once(
                [*data["hands"], data["talon"], data["table"], data["discard"]], game.deck_size
            )
            if talon and talon[-1] != state._trump_card:
                raise ValueError("the face-up trump card must be the talon's last card")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a serialised Durak state: {exc!r}") from exc
        return state

    def __repr__(self) -> str:
        return (
            f"<DurakState ply={self._ply} {PHASE_NAMES[self._phase]} to_move={self.to_move} "
            f"hands={[names(hand) for hand in self._hands]} table={names(self._table)}>"
        )
