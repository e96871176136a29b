"""Durak ("Дурачки"), exactly as docs/rules.md states it: deals and `fool` series.

Inside, a hand is an int bitmask of card indices (see ``cards``); moves cross the
boundary as the JSON dicts of docs/rules.md's move vocabulary.
"""

from __future__ import annotations

from .base import OVER, DealGame, DealState, neighbour_table, only_keys
from .cards import (
    CARD_NAMES,
    HIGHER,
    SUIT_MASKS,
    check_deck,
    indices,
    names,
    popcount,
    suit_of,
)
from .durak_rules import (
    ATTACK,
    ATTACK_KEYS,
    ATTACK_OPTIONS,
    BEAT_KEYS,
    DEFEND,
    HAND_SIZE,
    INFO,
    OPENINGS,
    PHASE_NAMES,
    SAME_RANK,
    TAKE_KEYS,
    attack_options,
    cover_assignments,
    read_attack,
    read_covers,
    why_not_cover,
)
from .durak_views import DurakViews
from .errors import IllegalMove, InvalidMove
from .info import EndReason
from .series import DurakSeries


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

    def state_from_json(self, data: dict) -> DurakState:
        return DurakState._from_json(self, data)


class DurakState(DurakViews, DealState):
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
            options = ATTACK_OPTIONS.get((group, limit))
            if options is None:
                options = ATTACK_OPTIONS[group, limit] = attack_options(group, limit)
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
            for cover in cover_assignments(attack, hand, beaters):
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
            attack = read_attack(move.get("cards"))
        elif kind == "beat":
            only_keys(move, BEAT_KEYS)
            covers = read_covers(move.get("covers"))
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
                raise IllegalMove(f"illegal move: {why_not_cover(a, b, self._trump)}")
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
