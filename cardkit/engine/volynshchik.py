"""Volynshchik ("Волынщик", the bagpiper), exactly as docs/rules.md states it.

Inside, a hand is an int bitmask of card indices (see ``cards``); the pile is a tuple of
card indices, bottom first; moves cross the boundary as docs/rules.md's JSON dicts.
"""

from __future__ import annotations

from .base import OVER, DealGame, DealState, neighbour_table, only_keys
from .cards import (
    CARD_NAMES,
    HIGHER,
    SUIT_MASKS,
    check_deck,
    names,
    parse_card,
    suit_of,
)
from .errors import IllegalMove, InvalidMove
from .info import EndReason
from .volynshchik_rules import (
    BARE_MOVE_KEYS,
    CARD_MOVE_KEYS,
    DECK_SIZE,
    INFO,
    LEAD,
    PHASE_NAMES,
    RESPOND,
)
from .volynshchik_views import VolynshchikViews


class VolynshchikGame(DealGame):
    """Volynshchik for 2-5 players with the 32-card deck."""

    INFO = INFO

    def __init__(
        self, players: int = INFO.default_players, deck_size: int = DECK_SIZE
    ) -> None:
        if not isinstance(players, int) or not INFO.min_players <= players <= INFO.max_players:
            raise ValueError(
                f"Volynshchik is played by {INFO.min_players} to {INFO.max_players} players"
            )
        if deck_size not in INFO.deck_sizes:
            raise ValueError("Volynshchik is played with the 32-card deck")
        self.players = players
        self.deck_size = DECK_SIZE
        self._next = neighbour_table(players)

    def __repr__(self) -> str:
        return f"load_game('volynshchik', players={self.players})"

    def deal(
        self,
        deck: list[str] | None = None,
        *,
        seed: int | str | None = None,
        dealer: int = 0,
        opening: str | None = None,
    ) -> VolynshchikState:
        """Return the opening state of a deal (``opening`` is Durak's and ignored here)."""
        deck = self._deck_to_deal(deck, seed, dealer)
        return VolynshchikState._deal(self, check_deck(deck, DECK_SIZE), dealer)

    def state_from_json(self, data: dict) -> VolynshchikState:
        return VolynshchikState._from_json(self, data)


class VolynshchikState(VolynshchikViews, DealState):
    """One moment of a Volynshchik deal.  Immutable: ``play`` returns a new state."""

    __slots__ = ("_reserves", "_declared", "_pile", "_removed", "_to_move")
    PHASE_NAMES = PHASE_NAMES

    @classmethod
    def _deal(cls, game: VolynshchikGame, deck: list[int], dealer: int) -> VolynshchikState:
        players = game.players
        hands = [0] * players
        reserves = [0] * players
        for position, card in enumerate(deck):
            seat = (dealer + 1 + position) % players
            hands[seat] |= 1 << card
            reserves[seat] = card  # each seat's last card dealt ends up here
        for seat in range(players):
            hands[seat] &= ~(1 << reserves[seat])
        return cls._make(
            game, dealer=dealer, hands=tuple(hands), reserves=tuple(reserves), declared=0,
            pile=(), to_move=(dealer + 1) % players,
        )

    @classmethod
    def _make(
        cls,
        game: VolynshchikGame,
        *,
        dealer: int,
        hands: tuple[int, ...],
        reserves: tuple[int, ...],
        declared: int,
        pile: tuple[int, ...],
        to_move: int,
        out_order: tuple[int, ...] = (),
        removed: int = 0,
        known: tuple[int, ...] | None = None,
    ) -> VolynshchikState:
        state = cls.__new__(cls)
        state._game = game
        state._dealer = dealer
        state._hands = hands
        state._known = known if known is not None else (0,) * game.players
        state._reserves = reserves
        state._declared = declared
        state._pile = pile
        state._removed = removed
        state._phase = RESPOND if pile else LEAD
        state._to_move = to_move
        state._in_deal = sum(1 << seat for seat in range(game.players) if hands[seat])
        state._out_order = out_order
        state._begin()
        return state

    def _child(self) -> VolynshchikState:
        child = VolynshchikState.__new__(VolynshchikState)
        child._game = self._game
        child._dealer = self._dealer
        child._hands = self._hands
        child._known = self._known
        child._reserves = self._reserves
        child._declared = self._declared
        child._pile = self._pile
        child._removed = self._removed
        child._phase = self._phase
        child._to_move = self._to_move
        child._in_deal = self._in_deal
        child._out_order = self._out_order
        child._ply = self._ply + 1
        child._seen = self._seen
        child._seen_len = self._seen_len
        child._result = None
        child._end = None
        return child

    def _position(self) -> tuple:
        return (self._hands, self._pile, self._declared, self._to_move, self._phase, self._in_deal)

    # -- public reading --------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        return None if self._phase == OVER else self._to_move

    def trump_of(self, seat: int) -> int | None:
        """Return the suit index of the seat's declared trump, or None."""
        if self._declared >> seat & 1:
            return suit_of(self._reserves[seat])
        return None

    # -- legal moves -----------------------------------------------------------------

    def _covers(self) -> tuple[int, int]:
        """Return (cards that may cover the top card, the natural higher ones among them)."""
        seat = self._to_move
        hand = self._hands[seat]
        top = self._pile[-1]
        natural = hand & HIGHER[top]
        covers = natural
        if self._declared >> seat & 1:
            trumps = SUIT_MASKS[suit_of(self._reserves[seat])]
            # On his own trump suit only a higher card covers, and that one is natural.
            if not trumps >> top & 1:
                covers |= hand & trumps
        return covers, natural

    def _legal(self) -> list[dict]:
        phase = self._phase
        if phase == LEAD:
            return [{"type": "lead", "card": card} for card in names(self._hands[self._to_move])]
        covers, natural = self._covers()
        moves = [{"type": "cover", "card": card} for card in names(covers)]
        if not natural:
            moves.append({"type": "take"})
            if not self._declared >> self._to_move & 1:
                moves.append({"type": "declare"})
        return moves

    # -- playing ---------------------------------------------------------------------

    def play(self, move: dict) -> VolynshchikState:
        """Return the state after ``move``; raise IllegalMove naming the rule it breaks."""
        if not isinstance(move, dict):
            raise InvalidMove("invalid move: a move is a JSON object with a 'type'")
        kind = move.get("type")
        # The move's form first: a malformed move is InvalidMove whatever the position.
        if kind in ("lead", "cover"):
            only_keys(move, CARD_MOVE_KEYS)
            card = parse_card(move.get("card"))
        elif kind in ("take", "declare"):
            only_keys(move, BARE_MOVE_KEYS)
        else:
            raise InvalidMove(
                f"invalid move: unknown move type {kind!r}; Volynshchik moves are lead, cover, "
                "take and declare"
            )
        phase = self._phase
        if phase == OVER:
            raise IllegalMove("illegal move: the deal is over")
        if kind == "lead":
            if phase != LEAD:
                raise IllegalMove(
                    f"illegal move: seat {self._to_move} faces {CARD_NAMES[self._pile[-1]]} and "
                    "must cover it, take it or declare; a lead comes only on an empty table or "
                    "right after covering (Volynshchik rule 5)"
                )
            self._check_holds(card)
            return self._lead(card)
        if phase != RESPOND:
            raise IllegalMove(
                f"illegal move: {kind} while seat {self._to_move} must lead a card "
                + ("onto an empty table (Volynshchik rule 5)" if not self._pile else
                   "onto the pile after covering, his own move (Volynshchik rule 5)")
            )
        if kind == "cover":
            self._check_holds(card)
            covers, _natural = self._covers()
            if not covers >> card & 1:
                raise IllegalMove(f"illegal move: {self._why_not_cover(card)}")
            return self._cover(card)
        _covers, natural = self._covers()
        top = CARD_NAMES[self._pile[-1]]
        if natural:
            raise IllegalMove(
                f"illegal move: seat {self._to_move} holds "
                f"{' '.join(names(natural))}, higher in {top}'s suit, and must cover "
                f"{top} (Volynshchik rule 5)"
            )
        if kind == "take":
            return self._take()
        if self._declared >> self._to_move & 1:
            raise IllegalMove(
                "illegal move: a player declares his trump only once per deal "
                "(Volynshchik rule 3)"
            )
        return self._declare()

    def _check_holds(self, card: int) -> None:
        if not self._hands[self._to_move] >> card & 1:
            if self._reserves[self._to_move] == card:
                raise IllegalMove(
                    f"illegal move: {CARD_NAMES[card]} is seat {self._to_move}'s reserve card, "
                    "never part of the hand and never played (Volynshchik rule 2)"
                )
            raise IllegalMove(
                f"illegal move: seat {self._to_move} does not hold {CARD_NAMES[card]}"
            )

    def _why_not_cover(self, card: int) -> str:
        top = self._pile[-1]
        card_name, top_name = CARD_NAMES[card], CARD_NAMES[top]
        trump = self.trump_of(self._to_move)
        if suit_of(card) == suit_of(top):
            return f"{card_name} cannot cover {top_name} (lower rank, same suit)"
        if trump is None:
            return (
                f"{card_name} cannot cover {top_name} (other suit, and seat {self._to_move} "
                "has declared no trump)"
            )
        if suit_of(top) == trump:
            return f"{card_name} cannot cover {top_name} (lower rank, same suit)"
        return f"{card_name} cannot cover {top_name} (other suit, not seat's declared trump)"

    def _lead(self, card: int) -> VolynshchikState:
        child = self._child()
        seat = self._to_move
        hand = child._give_up(seat, 1 << card)
        child._pile = self._pile + (card,)
        child._log = (seat, {"type": "lead", "card": CARD_NAMES[card]}, self._log)
        child._phase = RESPOND
        if not hand:
            # His last card: he is out, and the next player faces it on the pile.
            if child._go_out(seat):
                return child
            child._to_move = self._game._next[child._in_deal][seat]
            child._settle(irreversible=True)
            return child
        child._to_move = self._game._next[child._in_deal][seat]
        child._settle(irreversible=False)
        return child

    def _cover(self, card: int) -> VolynshchikState:
        child = self._child()
        seat = self._to_move
        hand = child._give_up(seat, 1 << card)
        child._log = (seat, {"type": "cover", "card": CARD_NAMES[card]}, self._log)
        if not hand:
            # Covering with his last card: he is out and the whole pile leaves play.
            removed = self._removed | 1 << card
            for card_on_pile in self._pile:
                removed |= 1 << card_on_pile
            child._removed = removed
            child._pile = ()
            child._phase = LEAD
            if child._go_out(seat):
                return child
            child._to_move = self._game._next[child._in_deal][seat]
            child._settle(irreversible=True)
            return child
        child._pile = self._pile + (card,)
        child._phase = LEAD  # his own move: the same seat leads onto the pile
        child._settle(irreversible=False)
        return child

    def _take(self) -> VolynshchikState:
        child = self._child()
        seat = self._to_move
        top = self._pile[-1]
        hands = list(self._hands)
        hands[seat] |= 1 << top
        child._hands = tuple(hands)
        known = list(self._known)
        known[seat] |= 1 << top
        child._known = tuple(known)
        child._pile = self._pile[:-1]
        child._log = (seat, {"type": "take"}, self._log)
        if not child._pile:
            # He took the whole pile: his turn ends, the next player leads.
            child._phase = LEAD
            child._to_move = self._game._next[self._in_deal][seat]
        child._settle(irreversible=False)
        return child

    def _declare(self) -> VolynshchikState:
        child = self._child()
        seat = self._to_move
        child._declared = self._declared | 1 << seat
        child._log = (seat, {"type": "declare"}, self._log)
        child._settle(irreversible=True)
        return child

    def _go_out(self, seat: int) -> bool:
        """Take ``seat`` out of the deal; return True when that ends it."""
        self._in_deal &= ~(1 << seat)
        self._out_order = self._out_order + (seat,)
        if self._in_deal & (self._in_deal - 1) == 0:
            self._finish(self._in_deal.bit_length() - 1, EndReason.LOSER)
            return True
        return False
