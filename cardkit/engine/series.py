"""The Durak `fool` series: a match of deals, each a ``DurakState`` its game deals.

It imports nothing of ``durak``: the series drives whatever game it is handed through the
game's ``deal`` and the deals' common state API (``base``), so the game module may offer
``DurakGame.series`` without a circle.
"""

from __future__ import annotations

from .base import DealGame, DealState
from .cards import check_deck, derive_seed, shuffled_deck
from .errors import IllegalMove

LETTERS = "ДУРАК"


class DurakSeries:
    """A `fool` series (Durak rule 9): deals until one seat holds all five letters.

    Immutable like a deal state: ``play`` returns a new series, already in its next deal
    when the move ended one.
    """

    __slots__ = (
        "_game", "_seed", "_decks", "_number", "_dealer", "_letters", "_carry", "_results",
        "_deal", "_loser",
    )

    @classmethod
    def _start(
        cls,
        game: DealGame,
        *,
        dealer: int,
        seed: int | str | None,
        decks: list[list[str]] | None,
    ) -> DurakSeries:
        if (seed is None) == (decks is None):
            raise ValueError("give exactly one of seed and decks")
        if decks is not None:
            decks = [list(d) for d in decks]
            if not decks:
                raise ValueError("give at least one deck")
            for deck in decks:
                check_deck(deck, game.deck_size)
        series = cls.__new__(cls)
        series._game = game
        series._seed = seed
        series._decks = decks
        series._number = 0
        series._dealer = dealer
        series._letters = (0,) * game.players
        series._carry = 0
        series._results = ()
        series._loser = None
        series._deal = series._deal_for(0, dealer, "lowest_trump")
        return series

    def _deal_for(self, number: int, dealer: int, opening: str) -> DealState:
        if self._decks is not None:
            if number >= len(self._decks):
                raise ValueError(
                    f"the series needs a deck for deal {number + 1}, but only "
                    f"{len(self._decks)} were given"
                )
            return self._game.deal(self._decks[number], dealer=dealer, opening=opening)
        return self._game.deal(
            seed=derive_seed(self._seed, number), dealer=dealer, opening=opening
        )

    def deck_of(self, number: int) -> list[str]:
        """Return the deck order of deal ``number`` (0-based)."""
        if self._decks is not None:
            return list(self._decks[number])
        return shuffled_deck(derive_seed(self._seed, number), self._game.deck_size)

    @property
    def game(self) -> DealGame:
        return self._game

    @property
    def deal(self) -> DealState:
        return self._deal

    @property
    def deal_number(self) -> int:
        return self._number

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def letters(self) -> list[int]:
        return list(self._letters)

    @property
    def carried_draws(self) -> int:
        return self._carry

    @property
    def is_over(self) -> bool:
        return self._loser is not None

    @property
    def to_move(self) -> int | None:
        return None if self.is_over else self._deal.to_move

    @property
    def result(self) -> dict | None:
        if self._loser is None:
            return None
        return {
            "loser": self._loser,
            "letters": list(self._letters),
            "deals": [dict(result) for result in self._results],
        }

    def legal_moves(self) -> list[dict]:
        return [] if self.is_over else self._deal.legal_moves()

    def play(self, move: dict) -> DurakSeries:
        if self.is_over:
            raise IllegalMove("illegal move: the series is over")
        deal = self._deal.play(move)
        series = self._copy()
        series._deal = deal
        if not deal.is_over:
            return series
        result = deal.result
        series._results = self._results + (result,)
        loser = result["loser"]
        if loser is None:
            series._carry = self._carry + 1
            opening = "lowest_trump"
        else:
            letters = list(self._letters)
            letters[loser] = min(len(LETTERS), letters[loser] + 1 + self._carry)
            series._letters = tuple(letters)
            series._carry = 0
            if letters[loser] == len(LETTERS):
                series._loser = loser
                return series
            series._dealer = loser
            opening = "dealer_left"
        series._number = self._number + 1
        series._deal = series._deal_for(series._number, series._dealer, opening)
        return series

    def _copy(self) -> DurakSeries:
        series = DurakSeries.__new__(DurakSeries)
        for name in DurakSeries.__slots__:
            setattr(series, name, getattr(self, name))
        return series

    def view(self, seat: int | None = None) -> dict:
        view = self._deal.view(seat)
        view["series"] = self._series_view()
        return view

    def reveal(self) -> dict:
        view = self._deal.reveal()
        view["series"] = self._series_view()
        return view

    def _series_view(self) -> dict:
        return {
            "deal_number": self._number,
            "dealer": self._dealer,
            "letters": list(self._letters),
            "letters_word": ["".join(LETTERS[:k]) for k in self._letters],
            "carried_draws": self._carry,
            "deals": [dict(result) for result in self._results],
            "is_over": self.is_over,
            "result": self.result,
        }

    def to_json(self) -> dict:
        return {
            "game": "durak",
            "format": "fool",
            "options": self._game.options,
            "seed": self._seed,
            "decks": self._decks,
            "deal_number": self._number,
            "dealer": self._dealer,
            "letters": list(self._letters),
            "carried_draws": self._carry,
            "deals": [dict(result) for result in self._results],
            "loser": self._loser,
            "deal": self._deal.to_json(),
        }

    @classmethod
    def _from_json(cls, game: DealGame, data: dict) -> DurakSeries:
        try:
            series = cls.__new__(cls)
            series._game = game
            series._seed = data["seed"]
            series._decks = data["decks"]
            series._number = data["deal_number"]
            series._dealer = data["dealer"]
            series._letters = tuple(data["letters"])
            series._carry = data["carried_draws"]
            series._results = tuple(data["deals"])
            series._loser = data["loser"]
            series._deal = game.state_from_json(data["deal"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a serialised Durak series: {exc!r}") from exc
        return series

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DurakSeries):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<DurakSeries deal={self._number} letters={list(self._letters)} {self._deal!r}>"
