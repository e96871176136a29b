"""What the states of both games share: the move log, results, and the endless-deal rule."""

from __future__ import annotations

from .cards import deck_cards, names
from .errors import InvalidMove
from .positions import MOVE_LIMIT, REPETITIONS_TO_DRAW, PositionCounts, record

OVER = 2


class DealState:
    """The common half of a deal's state.  Subclasses set ``PHASE_NAMES`` and ``_legal``.

    A state is immutable: its private attributes are set while it is being built by
    ``play`` and never after; read it through the public properties and methods.
    """

    __slots__ = (
        "_g", "_dealer", "_hands", "_known", "_phase", "_in", "_out_order", "_ply", "_log",
        "_seen", "_seen_len", "_result", "_end",
    )
    PHASE_NAMES: tuple[str, ...] = ()

    @property
    def game(self):
        return self._g

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
    def end_reason(self) -> str | None:
        """Why the deal ended: "loser", "both_out" (Durak), "repetition" or "move_limit"."""
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

    def _position(self) -> tuple:
        raise NotImplementedError

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
            self._finish(None, "repetition")
        elif self._ply >= MOVE_LIMIT:
            self._finish(None, "move_limit")

    def _finish(self, loser: int | None, reason: str) -> None:
        self._phase = OVER
        self._result = (loser, self._out_order)
        self._end = reason

    def _restore_log(self, history: list[dict]) -> None:
        log = None
        for entry in history:
            log = (entry["seat"], entry["move"], log)
        self._log = log

    def _positions_json(self) -> list:
        return [position_to_json(k) for k in self._seen.keys[:self._seen_len]]

    def _restore_positions(self, positions: list | None) -> None:
        if positions:
            self._seen = PositionCounts(position_from_json(k) for k in positions)
        else:
            self._seen = PositionCounts([self._position()])
        self._seen_len = len(self._seen.keys)

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
