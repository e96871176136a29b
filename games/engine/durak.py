"""Durak ("Дурачки"), exactly as docs/rules.md states it: deals and `fool` series.

Inside, a hand is an int bitmask of card indices (see ``cards``); moves cross the
boundary as the JSON dicts of docs/rules.md's move vocabulary.
"""

from __future__ import annotations

from typing import Any

from .base import OVER, DealGame, DealState, check_cards_once, neighbour_table, only_keys
from .cards import (
    CARD_INDEX,
    CARD_NAMES,
    HIGHER,
    SUIT_MASKS,
    SUITS,
    check_deck,
    indices,
    mask_of,
    names,
    parse_card,
    popcount,
    rank_of,
    suit_of,
)
from .errors import IllegalMove, InvalidMove
from .info import EndReason, GameInfo, MoveType
from .series import DurakSeries

ATTACK, DEFEND = 0, 1
PHASE_NAMES = ("attack", "defend", "over")
OPENINGS = ("lowest_trump", "dealer_left")
HAND_SIZE = 6
# SAME_RANK[card]: every card of card's rank (itself included), the cards one attack may hold.
SAME_RANK: tuple[int, ...] = tuple(
    sum(1 << (suit * 9 + rank_of(card)) for suit in range(4)) for card in range(36)
)

INFO = GameInfo(
    name="durak",
    title="Durak (Дурачки)",
    min_players=2,
    max_players=4,
    default_players=2,
    deck_sizes=(36, 32),
    default_deck_size=36,
    formats=("deal", "fool"),
    moves=(
        MoveType(
            type="attack",
            fields=("cards",),
            description="Attack with one card or several cards of one rank.",
            example={"type": "attack", "cards": ["8C", "8D"]},
        ),
        MoveType(
            type="beat",
            fields=("covers",),
            description="Cover every attack card: pairs of [attack card, covering card].",
            example={"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
        ),
        MoveType(
            type="take",
            fields=(),
            description="Take every attack card into the hand.",
            example={"type": "take"},
        ),
    ),
)
ATTACK_KEYS = INFO.move_type("attack").keys
BEAT_KEYS = INFO.move_type("beat").keys
TAKE_KEYS = INFO.move_type("take").keys


class DurakGame(DealGame):
    """Durak for 2-4 players with a 36- or 32-card deck."""

    INFO = INFO

    def __init__(
        self, players: int = INFO.default_players, deck_size: int = INFO.default_deck_size
    ) -> None:
        if not isinstance(players, int) or not INFO.min_players <= players <= INFO.max_players:
            raise ValueError(
                f"Durak is played by {INFO.min_players} to {INFO.max_players} players"
            )
        if deck_size not in INFO.deck_sizes:
            raise ValueError("Durak is played with a 36- or 32-card deck")
        self.players = players
        self.deck_size = deck_size
        # BEATERS[trump][card]: every card that covers card when trump is that suit.
        self._beaters = tuple(
            tuple(
                HIGHER[card] | (0 if suit_of(card) == trump else SUIT_MASKS[trump])
                for card in range(36)
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
        return DurakState._deal(self, check_deck(deck, self.deck_size), dealer, opening)

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
        players = game.players
        hands = [0] * players
        position = 0
        for _round in range(3):
            for step in range(1, players + 1):
                seat = (dealer + step) % players
                hands[seat] |= 1 << deck[position] | 1 << deck[position + 1]
                position += 2
        trump_card = deck[position]
        trump = suit_of(trump_card)
        attacker = (dealer + 1) % players
        if opening == "lowest_trump":
            lowest = None
            for seat in range(players):
                trumps = hands[seat] & SUIT_MASKS[trump]
                if trumps:
                    card = (trumps & -trumps).bit_length() - 1
                    if lowest is None or card < lowest:
                        lowest, attacker = card, seat
        state = cls.__new__(cls)
        state._game = game
        state._dealer = dealer
        state._opening = opening
        state._hands = tuple(hands)
        state._known = (0,) * players
        state._talon = tuple(deck[position + 1:]) + (trump_card,)
        state._drawn = 0
        state._trump_card = trump_card
        state._trump = trump
        state._table = 0
        state._discard = 0
        state._phase = ATTACK
        state._attacker = attacker
        state._in_deal = (1 << players) - 1
        state._defender = game._next[state._in_deal][attacker]
        state._out_order = ()
        state._begin()
        return state

    def _child(self) -> DurakState:
        child = DurakState.__new__(DurakState)
        child._game = self._game
        child._dealer = self._dealer
        child._opening = self._opening
        child._hands = self._hands
        child._known = self._known
        child._talon = self._talon
        child._drawn = self._drawn
        child._trump_card = self._trump_card
        child._trump = self._trump
        child._table = self._table
        child._discard = self._discard
        child._phase = self._phase
        child._attacker = self._attacker
        child._defender = self._defender
        child._in_deal = self._in_deal
        child._out_order = self._out_order
        child._ply = self._ply + 1
        child._seen = self._seen
        child._seen_len = self._seen_len
        child._result = None
        child._end = None
        return child

    def _position(self) -> tuple:
        to_move = self._defender if self._phase == DEFEND else self._attacker
        return (self._hands, self._drawn, self._table, to_move, self._phase, self._in_deal)

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
        limit = popcount(self._hands[self._defender])
        if limit > 4:
            limit = 4
        moves = []
        rest = hand
        while rest:
            rank_mask = SAME_RANK[(rest & -rest).bit_length() - 1]
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
        beaters = self._game._beaters[self._trump]
        attack = indices(self._table)
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
            only_keys(move, ATTACK_KEYS)
            attack = _read_attack(move.get("cards"))
        elif kind == "beat":
            only_keys(move, BEAT_KEYS)
            covers = _read_covers(move.get("covers"))
        elif kind == "take":
            only_keys(move, TAKE_KEYS)
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
        if mask & ~SAME_RANK[(mask & -mask).bit_length() - 1]:
            raise IllegalMove(
                "illegal move: several attack cards must all be of one rank (Durak rule 4)"
            )
        count, limit = popcount(mask), popcount(self._hands[self._defender])
        if count > limit:
            raise IllegalMove(
                f"illegal move: {count} attack cards but the defender holds only {limit}; "
                "never attack with more cards than the defender holds (Durak rule 4)"
            )
        return mask

    def _cover_pairs(self, covers: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Check a beat of well-formed pairs (a list of its own, as read); return them sorted."""
        beaters = self._game._beaters[self._trump]
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
        child = self._child()
        attacker = self._attacker
        child._give_up(attacker, mask)
        child._table = mask
        child._phase = DEFEND
        child._log = (attacker, {"type": "attack", "cards": names(mask)}, self._log)
        child._settle(irreversible=False)
        return child

    def _take(self) -> DurakState:
        child = self._child()
        defender = self._defender
        hands = list(self._hands)
        hands[defender] |= self._table
        known = list(self._known)
        known[defender] |= self._table
        child._table = 0
        child._log = (defender, {"type": "take"}, self._log)
        child._end_round(hands, known, beat=False)
        return child

    def _beat(self, pairs: list[tuple[int, int]]) -> DurakState:
        child = self._child()
        defender = self._defender
        covering = 0
        for _attack_card, cover_card in pairs:
            covering |= 1 << cover_card
        hands = list(self._hands)
        hands[defender] ^= covering
        known = list(self._known)
        known[defender] &= ~covering
        child._discard = self._discard | self._table | covering
        child._table = 0
        covers = [[CARD_NAMES[a], CARD_NAMES[b]] for a, b in pairs]
        child._log = (defender, {"type": "beat", "covers": covers}, self._log)
        child._end_round(hands, known, beat=True)
        return child

    def _end_round(self, hands: list[int], known: list[int], *, beat: bool) -> None:
        """Refill, put out the players with empty hands, and choose the next attacker."""
        game = self._game
        attacker, defender = self._attacker, self._defender
        talon = self._talon
        drawn = self._drawn
        remaining = len(talon) - drawn
        for seat in (attacker, defender) if beat else (attacker,):
            need = HAND_SIZE - popcount(hands[seat])
            if need > 0 and remaining:
                take = need if need < remaining else remaining
                for card in talon[drawn:drawn + take]:
                    hands[seat] |= 1 << card
                drawn += take
                remaining -= take
                if not remaining:
                    # The last card drawn is the face-up trump card: everyone saw who got it.
                    known[seat] |= 1 << self._trump_card
        in_mask = self._in_deal
        out_order = self._out_order
        if not remaining:
            for seat in (attacker, defender):
                if not hands[seat] and in_mask >> seat & 1:
                    in_mask &= ~(1 << seat)
                    out_order = out_order + (seat,)
        self._hands = tuple(hands)
        self._known = tuple(known)
        irreversible = beat or drawn != self._drawn or in_mask != self._in_deal
        self._drawn = drawn
        self._in_deal = in_mask
        self._out_order = out_order
        if in_mask & (in_mask - 1) == 0:
            loser = in_mask.bit_length() - 1 if in_mask else None
            self._finish(loser, EndReason.LOSER if loser is not None else EndReason.BOTH_OUT)
            return
        neighbours = game._next[in_mask]
        attacker = defender if beat and in_mask >> defender & 1 else neighbours[defender]
        self._attacker = attacker
        self._defender = neighbours[attacker]
        self._phase = ATTACK
        self._settle(irreversible)

    # -- views and serialisation -----------------------------------------------------

    def view(self, seat: int | None = None) -> dict:
        """Return what ``seat`` may see (None: a spectator), plus the public history.

        Hidden: other hands (except cards everyone saw go into them), the talon order.
        """
        players = self._game.players
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < players):
            raise ValueError(f"seat must be from 0 to {players - 1}")
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
    def _from_json(cls, game: DurakGame, data: dict) -> DurakState:
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
    if suit_of(a) == trump:
        if suit_of(b) == trump:
            return f"{b_name} cannot cover {a_name} (lower trump)"
        return (
            f"{b_name} cannot cover {a_name}: a trump attack card can only be covered by a "
            "higher trump (Durak rule 5)"
        )
    if suit_of(b) == suit_of(a):
        return f"{b_name} cannot cover {a_name} (lower rank, same suit)"
    return f"{b_name} cannot cover {a_name} (other suit, not a trump)"
