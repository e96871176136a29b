"""Durak ("Дурачки"), exactly as docs/rules.md states it: deals and `fool` series.

Inside, a hand is an int bitmask of card indices (see ``cards``); moves cross the
boundary as the JSON dicts of docs/rules.md's move vocabulary.
"""

from __future__ import annotations

from typing import Any

from . import cards as C
from .base import OVER, DealGame, DealState, check_cards_once, neighbour_table, only_keys
from .cards import CARD_NAMES, HIGHER, SUIT_MASKS, names, parse_card
from .errors import IllegalMove, InvalidMove

ATTACK, DEFEND = 0, 1
PHASE_NAMES = ("attack", "defend", "over")
OPENINGS = ("lowest_trump", "dealer_left")
HAND_SIZE = 6
RANK_MASKS: tuple[int, ...] = tuple(
    sum(1 << (s * 9 + r) for s in range(4)) for r in range(9)
)


class DurakGame(DealGame):
    """Durak for 2-4 players with a 36- or 32-card deck."""

    name = "durak"

    def __init__(self, players: int = 2, deck_size: int = 36) -> None:
        if not isinstance(players, int) or not 2 <= players <= 4:
            raise ValueError("Durak is played by 2 to 4 players")
        if deck_size not in (36, 32):
            raise ValueError("Durak is played with a 36- or 32-card deck")
        self.players = players
        self.deck_size = deck_size
        # BEATERS[trump][a]: every card that covers a when trump is that suit.
        self._beaters = tuple(
            tuple(
                HIGHER[a] | (0 if a // 9 == trump else SUIT_MASKS[trump])
                for a in range(36)
            )
            for trump in range(4)
        )
        # NEXT[in_mask][seat]: the left neighbour of seat among the seats in in_mask.
        self._next = neighbour_table(players)

    def __repr__(self) -> str:
        return f"load_game('durak', players={self.players}, deck_size={self.deck_size})"

    def deal(
        self,
        deck: list[str] | None = None,
        *,
        seed: int | str | None = None,
        dealer: int = 0,
        opening: str = "lowest_trump",
    ) -> DurakState:
        """Return the opening state of a deal from an explicit deck (top first) or a seed."""
        deck = self._deck_to_deal(deck, seed, dealer)
        if opening not in OPENINGS:
            raise ValueError(f"opening must be one of {', '.join(OPENINGS)}")
        return DurakState._deal(self, C.check_deck(deck, self.deck_size), dealer, opening)

    def series(
        self,
        *,
        dealer: int = 0,
        seed: int | str | None = None,
        decks: list[list[str]] | None = None,
    ) -> DurakSeries:
        """Return the start of a `fool` series: deals until one seat holds all of ДУРАК."""
        return DurakSeries._start(self, dealer=dealer, seed=seed, decks=decks)

    def replay(
        self,
        moves: list[dict],
        *,
        deck: list[str] | None = None,
        seed: int | str | None = None,
        dealer: int = 0,
        opening: str = "lowest_trump",
    ) -> DurakState:
        state = self.deal(deck, seed=seed, dealer=dealer, opening=opening)
        for move in moves:
            state = state.play(move)
        return state

    def state_from_json(self, data: dict) -> DurakState:
        return DurakState._from_json(self, data)


class DurakState(DealState):
    """One moment of a Durak deal.  Immutable: ``play`` returns a new state."""

    __slots__ = (
        "_opening", "_talon", "_drawn", "_trump_card", "_trump", "_table", "_discard",
        "_attacker", "_defender",
    )
    PHASE_NAMES = PHASE_NAMES

    # -- construction ----------------------------------------------------------------

    @classmethod
    def _deal(cls, game: DurakGame, deck: list[int], dealer: int, opening: str) -> DurakState:
        n = game.players
        hands = [0] * n
        position = 0
        for _round in range(3):
            for step in range(1, n + 1):
                seat = (dealer + step) % n
                hands[seat] |= 1 << deck[position] | 1 << deck[position + 1]
                position += 2
        trump_card = deck[position]
        trump = trump_card // 9
        attacker = (dealer + 1) % n
        if opening == "lowest_trump":
            lowest = None
            for seat in range(n):
                trumps = hands[seat] & SUIT_MASKS[trump]
                if trumps:
                    card = (trumps & -trumps).bit_length() - 1
                    if lowest is None or card < lowest:
                        lowest, attacker = card, seat
        s = cls.__new__(cls)
        s._g = game
        s._dealer = dealer
        s._opening = opening
        s._hands = tuple(hands)
        s._known = (0,) * n
        s._talon = tuple(deck[position + 1:]) + (trump_card,)
        s._drawn = 0
        s._trump_card = trump_card
        s._trump = trump
        s._table = 0
        s._discard = 0
        s._phase = ATTACK
        s._attacker = attacker
        s._in = (1 << n) - 1
        s._defender = game._next[s._in][attacker]
        s._out_order = ()
        s._begin()
        return s

    def _child(self) -> DurakState:
        s = DurakState.__new__(DurakState)
        s._g = self._g
        s._dealer = self._dealer
        s._opening = self._opening
        s._hands = self._hands
        s._known = self._known
        s._talon = self._talon
        s._drawn = self._drawn
        s._trump_card = self._trump_card
        s._trump = self._trump
        s._table = self._table
        s._discard = self._discard
        s._phase = self._phase
        s._attacker = self._attacker
        s._defender = self._defender
        s._in = self._in
        s._out_order = self._out_order
        s._ply = self._ply + 1
        s._seen = self._seen
        s._seen_len = self._seen_len
        s._result = None
        s._end = None
        return s

    def _position(self) -> tuple:
        to_move = self._defender if self._phase == DEFEND else self._attacker
        return (self._hands, self._drawn, self._table, to_move, self._phase, self._in)

    # -- public reading --------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        if self._phase == ATTACK:
            return self._attacker
        if self._phase == DEFEND:
            return self._defender
        return None

    # -- legal moves -----------------------------------------------------------------

    def _legal(self) -> list[dict]:
        return self._attacks() if self._phase == ATTACK else self._defences()

    def _attacks(self) -> list[dict]:
        hand = self._hands[self._attacker]
        limit = C.popcount(self._hands[self._defender])
        if limit > 4:
            limit = 4
        moves = []
        rest = hand
        while rest:
            rank_mask = RANK_MASKS[((rest & -rest).bit_length() - 1) % 9]
            rest &= ~rank_mask
            group = hand & rank_mask
            options = _ATTACK_OPTIONS.get((group, limit))
            if options is None:
                options = _ATTACK_OPTIONS[group, limit] = _attack_options(group, limit)
            for cards in options:
                moves.append({"type": "attack", "cards": list(cards)})
        return moves

    def _defences(self) -> list[dict]:
        hand = self._hands[self._defender]
        beaters = self._g._beaters[self._trump]
        attack = C.indices(self._table)
        moves = []
        if len(attack) == 1:
            a = attack[0]
            a_name = CARD_NAMES[a]
            options = hand & beaters[a]
            while options:
                low = options & -options
                moves.append(
                    {"type": "beat", "covers": [[a_name, CARD_NAMES[low.bit_length() - 1]]]}
                )
                options ^= low
        else:
            attack_names = [CARD_NAMES[a] for a in attack]
            for cover in _assignments(attack, hand, beaters):
                covers = [[a, CARD_NAMES[b]] for a, b in zip(attack_names, cover, strict=True)]
                moves.append({"type": "beat", "covers": covers})
        moves.append({"type": "take"})
        return moves

    # -- playing ---------------------------------------------------------------------

    def play(self, move: dict) -> DurakState:
        """Return the state after ``move``; raise IllegalMove naming the rule it breaks."""
        if not isinstance(move, dict):
            raise InvalidMove("invalid move: a move is a JSON object with a 'type'")
        kind = move.get("type")
        # The move's form first: a malformed move is InvalidMove whatever the position.
        if kind == "attack":
            only_keys(move, ("type", "cards"))
            attack = _read_attack(move.get("cards"))
        elif kind == "beat":
            only_keys(move, ("type", "covers"))
            covers = _read_covers(move.get("covers"))
        elif kind == "take":
            only_keys(move, ("type",))
        else:
            raise InvalidMove(
                f"invalid move: unknown move type {kind!r}; Durak moves are attack, beat and take"
            )
        phase = self._phase
        if phase == OVER:
            raise IllegalMove("illegal move: the deal is over")
        if phase != (ATTACK if kind == "attack" else DEFEND):
            raise self._wrong_phase(kind)
        if kind == "attack":
            return self._attack(self._attack_checked(attack))
        if kind == "beat":
            return self._beat(self._cover_pairs(covers))
        return self._take()

    def _wrong_phase(self, kind: str) -> IllegalMove:
        if self._phase == ATTACK:
            return IllegalMove(
                f"illegal move: {kind} while seat {self._attacker} must attack; an attack is "
                "never empty and the attacker cannot pass (Durak rule 4)"
            )
        return IllegalMove(
            f"illegal move: {kind} while seat {self._defender} must defend, by beating every "
            "attack card or taking them all (Durak rule 5)"
        )

    def _attack_checked(self, mask: int) -> int:
        """Check an attack of well-formed cards (a mask, as read) and return it."""
        if not mask:
            raise IllegalMove("illegal move: an attack is never empty (Durak rule 4)")
        hand = self._hands[self._attacker]
        if mask & ~hand:
            raise IllegalMove(
                f"illegal move: seat {self._attacker} does not hold "
                f"{' '.join(names(mask & ~hand))}"
            )
        if mask & ~RANK_MASKS[((mask & -mask).bit_length() - 1) % 9]:
            raise IllegalMove(
                "illegal move: several attack cards must all be of one rank (Durak rule 4)"
            )
        count, limit = C.popcount(mask), C.popcount(self._hands[self._defender])
        if count > limit:
            raise IllegalMove(
                f"illegal move: {count} attack cards but the defender holds only {limit}; "
                "never attack with more cards than the defender holds (Durak rule 4)"
            )
        return mask

    def _cover_pairs(self, covers: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Check a beat of well-formed pairs (a list of its own, as read); return them sorted."""
        beaters = self._g._beaters[self._trump]
        hand = self._hands[self._defender]
        covered = 0
        covering = 0
        for a, b in covers:
            if not self._table >> a & 1:
                raise IllegalMove(
                    f"illegal move: {CARD_NAMES[a]} is not an attack card on the table"
                )
            if covered >> a & 1:
                raise IllegalMove(
                    f"illegal move: {CARD_NAMES[a]} is covered twice; each covering card covers "
                    "exactly one attack card (Durak rule 5)"
                )
            if covering >> b & 1:
                raise IllegalMove(
                    f"illegal move: {CARD_NAMES[b]} covers two cards; each covering card covers "
                    "exactly one attack card (Durak rule 5)"
                )
            if not hand >> b & 1:
                raise IllegalMove(
                    f"illegal move: seat {self._defender} does not hold {CARD_NAMES[b]}"
                )
            if not beaters[a] >> b & 1:
                raise IllegalMove(f"illegal move: {_why_not_cover(a, b, self._trump)}")
            covered |= 1 << a
            covering |= 1 << b
        if covered != self._table:
            raise IllegalMove(
                "illegal move: no partial defence; beat every attack card "
                f"({' '.join(names(self._table & ~covered))} left uncovered) or take them "
                "all (Durak rule 5)"
            )
        covers.sort()
        return covers

    def _attack(self, mask: int) -> DurakState:
        s = self._child()
        a = self._attacker
        s._give_up(a, mask)
        s._table = mask
        s._phase = DEFEND
        s._log = (a, {"type": "attack", "cards": names(mask)}, self._log)
        s._settle(irreversible=False)
        return s

    def _take(self) -> DurakState:
        s = self._child()
        d = self._defender
        hands = list(self._hands)
        hands[d] |= self._table
        known = list(self._known)
        known[d] |= self._table
        s._table = 0
        s._log = (d, {"type": "take"}, self._log)
        s._end_round(hands, known, beat=False)
        return s

    def _beat(self, pairs: list[tuple[int, int]]) -> DurakState:
        s = self._child()
        d = self._defender
        covering = 0
        for _a, b in pairs:
            covering |= 1 << b
        hands = list(self._hands)
        hands[d] ^= covering
        known = list(self._known)
        known[d] &= ~covering
        s._discard = self._discard | self._table | covering
        s._table = 0
        covers = [[CARD_NAMES[a], CARD_NAMES[b]] for a, b in pairs]
        s._log = (d, {"type": "beat", "covers": covers}, self._log)
        s._end_round(hands, known, beat=True)
        return s

    def _end_round(self, hands: list[int], known: list[int], *, beat: bool) -> None:
        """Refill, put out the players with empty hands, and choose the next attacker."""
        game = self._g
        attacker, defender = self._attacker, self._defender
        talon = self._talon
        drawn = self._drawn
        remaining = len(talon) - drawn
        for seat in (attacker, defender) if beat else (attacker,):
            need = HAND_SIZE - C.popcount(hands[seat])
            if need > 0 and remaining:
                take = need if need < remaining else remaining
                for card in talon[drawn:drawn + take]:
                    hands[seat] |= 1 << card
                drawn += take
                remaining -= take
                if not remaining:
                    # The last card drawn is the face-up trump card: everyone saw who got it.
                    known[seat] |= 1 << self._trump_card
        in_mask = self._in
        out_order = self._out_order
        if not remaining:
            for seat in (attacker, defender):
                if not hands[seat] and in_mask >> seat & 1:
                    in_mask &= ~(1 << seat)
                    out_order = out_order + (seat,)
        self._hands = tuple(hands)
        self._known = tuple(known)
        irreversible = beat or drawn != self._drawn or in_mask != self._in
        self._drawn = drawn
        self._in = in_mask
        self._out_order = out_order
        if in_mask & (in_mask - 1) == 0:
            loser = in_mask.bit_length() - 1 if in_mask else None
            self._finish(loser, "loser" if loser is not None else "both_out")
            return
        nxt = game._next[in_mask]
        attacker = defender if beat and in_mask >> defender & 1 else nxt[defender]
        self._attacker = attacker
        self._defender = nxt[attacker]
        self._phase = ATTACK
        self._settle(irreversible)

    # -- views and serialisation -----------------------------------------------------

    def view(self, seat: int | None = None) -> dict:
        """Return what ``seat`` may see (None: a spectator), plus the public history.

        Hidden: other hands (except cards everyone saw go into them), the talon order.
        """
        n = self._g.players
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < n):
            raise ValueError(f"seat must be from 0 to {n - 1}")
        view = {
            "game": "durak",
            "players": n,
            "deck_size": self._g.deck_size,
            "seat": seat,
            "dealer": self._dealer,
            "trump_suit": C.SUITS[self._trump],
            "trump_card": CARD_NAMES[self._trump_card],
            "phase": PHASE_NAMES[self._phase],
            "to_move": self.to_move,
            "attacker": None if self._phase == OVER else self._attacker,
            "defender": None if self._phase == OVER else self._defender,
            "hand_sizes": [C.popcount(h) for h in self._hands],
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
        view["hands"] = [names(h) for h in self._hands]
        view["talon"] = [CARD_NAMES[c] for c in self._talon[self._drawn:]]
        return view

    def to_json(self) -> dict:
        """Return everything needed to rebuild this state exactly (hidden cards included)."""
        return {
            "game": "durak",
            "options": self._g.options,
            "dealer": self._dealer,
            "opening": self._opening,
            "hands": [names(h) for h in self._hands],
            "known": [names(k) for k in self._known],
            "talon": [CARD_NAMES[c] for c in self._talon[self._drawn:]],
            "trump_card": CARD_NAMES[self._trump_card],
            "table": names(self._table),
            "discard": names(self._discard),
            "phase": PHASE_NAMES[self._phase],
            "attacker": self._attacker,
            "defender": self._defender,
            **self._progress_json(),
        }

    @classmethod
    def _from_json(cls, game: DurakGame, data: dict) -> DurakState:
        try:
            s = cls.__new__(cls)
            s._g = game
            s._dealer = data["dealer"]
            s._opening = data["opening"]
            s._hands = tuple(C.mask_of(h) for h in data["hands"])
            s._known = tuple(C.mask_of(k) for k in data["known"])
            s._trump_card = C.CARD_INDEX[data["trump_card"]]
            s._trump = s._trump_card // 9
            talon = tuple(C.CARD_INDEX[c] for c in data["talon"])
            drawn = game.deck_size - HAND_SIZE * game.players - len(talon)
            # Drawn cards are gone from the talon; keep their count, a part of each position.
            s._talon = (-1,) * drawn + talon
            s._drawn = drawn
            s._table = C.mask_of(data["table"])
            s._discard = C.mask_of(data["discard"])
            s._phase = PHASE_NAMES.index(data["phase"])
            s._attacker = data["attacker"]
            s._defender = data["defender"]
            s._restore_progress(data)
            talon_cards = [C.CARD_INDEX[c] for c in data["talon"]]
            check_cards_once(
                [*data["hands"], data["talon"], data["table"], data["discard"]], game.deck_size
            )
            if talon_cards and talon_cards[-1] != s._trump_card:
                raise ValueError("the face-up trump card must be the talon's last card")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a serialised Durak state: {exc!r}") from exc
        return s

    def __repr__(self) -> str:
        return (
            f"<DurakState ply={self._ply} {PHASE_NAMES[self._phase]} to_move={self.to_move} "
            f"hands={[names(h) for h in self._hands]} table={names(self._table)}>"
        )


_ATTACK_OPTIONS: dict[tuple[int, int], tuple[tuple[str, ...], ...]] = {}


def _attack_options(group: int, limit: int) -> tuple[tuple[str, ...], ...]:
    """Return every non-empty set of the cards in ``group`` (one rank) of at most ``limit``."""
    cards = names(group)
    return tuple(
        tuple(cards[i] for i in range(len(cards)) if subset >> i & 1)
        for subset in range(1, 1 << len(cards))
        if subset.bit_count() <= limit
    )


def _assignments(attack: list[int], hand: int, beaters: tuple[int, ...]):
    """Yield every way to cover the attack cards with distinct cards of ``hand``."""
    if not attack:
        yield ()
        return
    first, rest = attack[0], attack[1:]
    options = hand & beaters[first]
    while options:
        low = options & -options
        b = low.bit_length() - 1
        for tail in _assignments(rest, hand ^ low, beaters):
            yield (b, *tail)
        options ^= low


def _read_attack(cards: Any) -> int:
    """Return the cards of an attack as a mask; raise InvalidMove unless they are a list
    of cards, each listed once."""
    if not isinstance(cards, list):
        raise InvalidMove("invalid move: an attack needs 'cards', a list of cards")
    mask = 0
    for name in cards:
        bit = 1 << parse_card(name)
        if mask & bit:
            raise InvalidMove(f"invalid move: {name} is listed twice")
        mask |= bit
    return mask


def _read_covers(covers: Any) -> list[tuple[int, int]]:
    """Return the pairs of a beat; raise InvalidMove unless they are a list of
    [attack card, covering card]."""
    if not isinstance(covers, list):
        raise InvalidMove(
            "invalid move: a beat needs 'covers', a list of [attack card, covering card]"
        )
    pairs = []
    for pair in covers:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InvalidMove("invalid move: each cover is a pair [attack card, covering card]")
        pairs.append((parse_card(pair[0]), parse_card(pair[1])))
    return pairs


def _why_not_cover(a: int, b: int, trump: int) -> str:
    a_name, b_name = CARD_NAMES[a], CARD_NAMES[b]
    if a // 9 == trump:
        if b // 9 == trump:
            return f"{b_name} cannot cover {a_name} (lower trump)"
        return (
            f"{b_name} cannot cover {a_name}: a trump attack card can only be covered by a "
            "higher trump (Durak rule 5)"
        )
    if b // 9 == a // 9:
        return f"{b_name} cannot cover {a_name} (lower rank, same suit)"
    return f"{b_name} cannot cover {a_name} (other suit, not a trump)"


LETTERS = "ДУРАК"


class DurakSeries:
    """A `fool` series (Durak rule 9): deals until one seat holds all five letters.

    Immutable like a deal state: ``play`` returns a new series, already in its next deal
    when the move ended one.
    """

    __slots__ = (
        "_g", "_seed", "_decks", "_number", "_dealer", "_letters", "_carry", "_results",
        "_deal", "_loser",
    )

    @classmethod
    def _start(
        cls,
        game: DurakGame,
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
                C.check_deck(deck, game.deck_size)
        s = cls.__new__(cls)
        s._g = game
        s._seed = seed
        s._decks = decks
        s._number = 0
        s._dealer = dealer
        s._letters = (0,) * game.players
        s._carry = 0
        s._results = ()
        s._loser = None
        s._deal = s._deal_for(0, dealer, "lowest_trump")
        return s

    def _deal_for(self, number: int, dealer: int, opening: str) -> DurakState:
        if self._decks is not None:
            if number >= len(self._decks):
                raise ValueError(
                    f"the series needs a deck for deal {number + 1}, but only "
                    f"{len(self._decks)} were given"
                )
            return self._g.deal(self._decks[number], dealer=dealer, opening=opening)
        return self._g.deal(seed=C.derive_seed(self._seed, number), dealer=dealer, opening=opening)

    def deck_of(self, number: int) -> list[str]:
        """Return the deck order of deal ``number`` (0-based)."""
        if self._decks is not None:
            return list(self._decks[number])
        return C.shuffled_deck(C.derive_seed(self._seed, number), self._g.deck_size)

    @property
    def game(self) -> DurakGame:
        return self._g

    @property
    def deal(self) -> DurakState:
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
            "deals": [dict(r) for r in self._results],
        }

    def legal_moves(self) -> list[dict]:
        return [] if self.is_over else self._deal.legal_moves()

    def play(self, move: dict) -> DurakSeries:
        if self.is_over:
            raise IllegalMove("illegal move: the series is over")
        deal = self._deal.play(move)
        s = self._copy()
        s._deal = deal
        if not deal.is_over:
            return s
        result = deal.result
        s._results = self._results + (result,)
        loser = result["loser"]
        if loser is None:
            s._carry = self._carry + 1
            opening = "lowest_trump"
        else:
            letters = list(self._letters)
            letters[loser] = min(len(LETTERS), letters[loser] + 1 + self._carry)
            s._letters = tuple(letters)
            s._carry = 0
            if letters[loser] == len(LETTERS):
                s._loser = loser
                return s
            s._dealer = loser
            opening = "dealer_left"
        s._number = self._number + 1
        s._deal = s._deal_for(s._number, s._dealer, opening)
        return s

    def _copy(self) -> DurakSeries:
        s = DurakSeries.__new__(DurakSeries)
        for name in DurakSeries.__slots__:
            setattr(s, name, getattr(self, name))
        return s

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
            "deals": [dict(r) for r in self._results],
            "is_over": self.is_over,
            "result": self.result,
        }

    def to_json(self) -> dict:
        return {
            "game": "durak",
            "format": "fool",
            "options": self._g.options,
            "seed": self._seed,
            "decks": self._decks,
            "deal_number": self._number,
            "dealer": self._dealer,
            "letters": list(self._letters),
            "carried_draws": self._carry,
            "deals": [dict(r) for r in self._results],
            "loser": self._loser,
            "deal": self._deal.to_json(),
        }

    @classmethod
    def _from_json(cls, game: DurakGame, data: dict) -> DurakSeries:
        try:
            s = cls.__new__(cls)
            s._g = game
            s._seed = data["seed"]
            s._decks = data["decks"]
            s._number = data["deal_number"]
            s._dealer = data["dealer"]
            s._letters = tuple(data["letters"])
            s._carry = data["carried_draws"]
            s._results = tuple(data["deals"])
            s._loser = data["loser"]
            s._deal = DurakState._from_json(game, data["deal"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a serialised Durak series: {exc!r}") from exc
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DurakSeries):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<DurakSeries deal={self._number} letters={list(self._letters)} {self._deal!r}>"
