"""What the states of both games share: the move log, results, and the endless-deal rule."""

from __future__ import annotations

from typing import Any

from .cards import deck_cards, names, shuffled_deck
from .errors import InvalidMove
from .info import EndReason, GameInfo
from .positions import MOVE_LIMIT, REPETITIONS_TO_DRAW, PositionCounts, record

OVER = 2


class DealGame:
    """The common half of a game: its options and the arguments of a deal."""

    INFO: GameInfo
    players: int
    deck_size: int

    @property
    def name(self) -> str:
        return self.INFO.name

    @property
    def options(self) -> dict[str, Any]:
        return {"players": self.players, "deck_size": self.deck_size}

    def _deck_to_deal(self, deck: list[str] | None, seed: int | str | None, dealer: Any) -> list:
        """Check exactly one of deck and seed and the dealer; return the deck, top first.

        The deck itself is not checked here: ``cards.check_deck`` does that.
        """
        if (deck is None) == (seed is None):
            raise ValueError("give exactly one of deck and seed")
        if deck is None:
            deck = shuffled_deck(seed, self.deck_size)
        if not isinstance(dealer, int) or not 0 <= dealer < self.players:
            raise ValueError(f"dealer must be a seat from 0 to {self.players - 1}")
        return deck

    def replay(
        self,
        moves: list[dict],
        *,
        deck: list[str] | None = None,
        seed: int | str | None = None,
        dealer: int = 0,
        **deal_options: Any,
    ) -> DealState:
        """Return the state that ``moves`` reach from the deal of these arguments (``deal``'s,
        e.g. Durak's ``opening``)."""
        state = self.deal(deck, seed=seed, dealer=dealer, **deal_options)
        for move in moves:
            state = state.play(move)
        return state


class DealState:
    """The common half of a deal's state.  Subclasses set ``PHASE_NAMES`` and ``_legal``.

    A state is immutable: its private attributes are set while it is being built by
    ``play`` and never after; read it through the public properties and methods.
    """

    __slots__ = (
        "_game", "_dealer", "_hands", "_known", "_phase", "_in_deal", "_out_order", "_ply", "_log",
        "_seen", "_seen_len", "_result", "_end",
    )
    PHASE_NAMES: tuple[str, ...] = ()

    @property
    def game(self):
        return self._game

    @property
    def is_over(self) -> bool:
        return self._phase == OVER

    @property
    def result(self) -> dict | None:
        """``{"loser": seat or None, "out_order": [...]}`` once the deal is over."""
        if self._result is None:
            return None
        return {"loser": self._result[0], "out_order": list(self._result[1])}

    @property
    def end_reason(self) -> EndReason | None:
        """Why the deal ended (None while it goes on)."""
        return self._end

    @property
    def ply(self) -> int:
        """How many moves this deal has had."""
        return self._ply

    @property
    def phase(self) -> str:
        return self.PHASE_NAMES[self._phase]

    def hand(self, seat: int) -> list[str]:
        return names(self._hands[seat])

    def history(self) -> list[dict]:
        """Return the public log of this deal: every move with the seat that made it."""
        entries = []
        node = self._log
        while node is not None:
            seat, move, node = node
            entries.append({"seat": seat, "move": move})
        entries.reverse()
        return entries

    def moves(self) -> list[dict]:
        return [entry["move"] for entry in self.history()]

    def legal_moves(self) -> list[dict]:
        """Return every legal move of the seat to act (empty once the deal is over).

        The list and its dicts are new on every call, so a caller may change them freely.
        """
        return self._legal() if self._phase != OVER else []

    def _legal(self) -> list[dict]:
        raise NotImplementedError

    def _check_seat(self, seat: int | None) -> None:
        """Refuse a ``seat`` that is neither None (a spectator) nor a seat of the deal."""
        players = self._game.players
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < players):
            raise ValueError(f"seat must be from 0 to {players - 1}")

    def _position(self) -> tuple:
        raise NotImplementedError

    def _begin(self) -> None:
        """Start the deal's record at this state: no moves yet, this position seen once."""
        self._ply = 0
        self._log = None
        self._seen = PositionCounts([self._position()])
        self._seen_len = 1
        self._result = None
        self._end = None

    def _give_up(self, seat: int, cards: int) -> int:
        """Take ``cards`` (a mask ``seat`` holds) out of its hand and known cards.

        Call it on a new child state only.  Return the seat's hand left.
        """
        hands = list(self._hands)
        hand = hands[seat] = hands[seat] ^ cards
        self._hands = tuple(hands)
        if self._known[seat] & cards:
            known = list(self._known)
            known[seat] &= ~cards
            self._known = tuple(known)
        return hand

    def _settle(self, irreversible: bool) -> None:
        """Count the new position; end the deal drawn on its fifth occurrence or move 1,000."""
        key = self._position()
        if irreversible:
            self._seen = PositionCounts([key])
            self._seen_len = 1
            count = 1
        else:
            self._seen, count = record(self._seen, self._seen_len, key)
            self._seen_len = len(self._seen.keys)
        if count >= REPETITIONS_TO_DRAW:
            self._finish(None, EndReason.REPETITION)
        elif self._ply >= MOVE_LIMIT:
            self._finish(None, EndReason.MOVE_LIMIT)

    def _finish(self, loser: int | None, reason: EndReason) -> None:
        self._phase = OVER
        self._result = (loser, self._out_order)
        self._end = reason

    def _progress_view(self) -> dict:
        """Return the public part of ``view`` that both games share, its last keys."""
        return {
            "known_cards": [names(known) for known in self._known],
            "in_deal": self._seats_in_deal(),
            "out_order": list(self._out_order),
            "ply": self._ply,
            "history": self.history(),
            "is_over": self.is_over,
            "result": self.result,
            "end_reason": self._end,
        }

    def _seats_in_deal(self) -> list[int]:
        return [seat for seat in range(self._game.players) if self._in_deal >> seat & 1]

    def _progress_json(self) -> dict:
        """Return the part of ``to_json`` that both games share, its last keys."""
        return {
            "in_deal": self._seats_in_deal(),
            "out_order": list(self._out_order),
            "ply": self._ply,
            "history": self.history(),
            "positions": [position_to_json(key) for key in self._seen.keys[:self._seen_len]],
            "result": self.result,
            "end_reason": self._end,
        }

    def _restore_progress(self, data: dict) -> None:
        """Set what ``_progress_json`` wrote; the game's own fields must be set already."""
        self._in_deal = sum(1 << seat for seat in data["in_deal"])
        self._out_order = tuple(data["out_order"])
        self._ply = data["ply"]
        log = None
        for entry in data["history"]:
            log = (entry["seat"], entry["move"], log)
        self._log = log
        positions = data.get("positions")
        if positions:
            self._seen = PositionCounts(position_from_json(key) for key in positions)
        else:
            self._seen = PositionCounts([self._position()])
        self._seen_len = len(self._seen.keys)
        result = data["result"]
        self._result = None if result is None else (result["loser"], tuple(result["out_order"]))
        end = data["end_reason"]
        self._end = None if end is None else EndReason(end)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict:
        raise NotImplementedError


def check_cards_once(places: list[list[str]], deck_size: int) -> None:
    """Raise ValueError unless the places hold every card of the deck exactly once."""
    held = [card for place in places for card in place]
    if len(held) != deck_size or set(held) != set(deck_cards(deck_size)):
        raise ValueError("the cards of the state are not exactly the deck, each card once")


def position_to_json(key: tuple) -> list:
    """Return a position key (hands tuple first) as JSON lists."""
    return [list(part) if isinstance(part, tuple) else part for part in key]


def position_from_json(data: list) -> tuple:
    return tuple(tuple(part) if isinstance(part, list) else part for part in data)


def next_in(seat: int, in_mask: int, players: int) -> int | None:
    """Return the next seat clockwise after ``seat`` that is in ``in_mask``."""
    for step in range(1, players + 1):
        other = (seat + step) % players
        if in_mask >> other & 1:
            return other
    return None


def neighbour_table(players: int) -> tuple[tuple[int | None, ...], ...]:
    """Return ``table[in_mask][seat]``: seat's left neighbour among the seats in in_mask."""
    return tuple(
        tuple(next_in(seat, mask, players) for seat in range(players))
        for mask in range(1 << players)
    )


def only_keys(move: dict, allowed: tuple[str, ...]) -> None:
    extra = set(move) - set(allowed)
    if extra:
        raise InvalidMove(
            f"invalid move: unexpected field(s) {', '.join(sorted(map(str, extra)))} in a "
            f"{move.get('type')} move"
        )
