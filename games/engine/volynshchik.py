"""Volynshchik ("Волынщик", the bagpiper), exactly as docs/rules.md states it.

Inside, a hand is an int bitmask of card indices (see ``cards``); the pile is a tuple of
card indices, bottom first; moves cross the boundary as docs/rules.md's JSON dicts.
"""

from __future__ import annotations

from . import cards as C
from .base import OVER, DealGame, DealState, check_cards_once, neighbour_table, only_keys
from .cards import CARD_NAMES, HIGHER, SUIT_MASKS, names, parse_card
from .errors import IllegalMove, InvalidMove

LEAD, RESPOND = 0, 1
PHASE_NAMES = ("lead", "respond", "over")
DECK_SIZE = 32


class VolynshchikGame(DealGame):
    """Volynshchik for 2-5 players with the 32-card deck."""

    name = "volynshchik"

    def __init__(self, players: int = 3, deck_size: int = DECK_SIZE) -> None:
        if not isinstance(players, int) or not 2 <= players <= 5:
            raise ValueError("Volynshchik is played by 2 to 5 players")
        if deck_size != DECK_SIZE:
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
        return VolynshchikState._deal(self, C.check_deck(deck, DECK_SIZE), dealer)

    def replay(
        self,
        moves: list[dict],
        *,
        deck: list[str] | None = None,
        seed: int | str | None = None,
        dealer: int = 0,
        opening: str | None = None,
    ) -> VolynshchikState:
        state = self.deal(deck, seed=seed, dealer=dealer)
        for move in moves:
            state = state.play(move)
        return state

    def state_from_json(self, data: dict) -> VolynshchikState:
        return VolynshchikState._from_json(self, data)


class VolynshchikState(DealState):
    """One moment of a Volynshchik deal.  Immutable: ``play`` returns a new state."""

    __slots__ = ("_reserves", "_declared", "_pile", "_removed", "_to_move")
    PHASE_NAMES = PHASE_NAMES

    @classmethod
    def _deal(cls, game: VolynshchikGame, deck: list[int], dealer: int) -> VolynshchikState:
        n = game.players
        hands = [0] * n
        reserves = [0] * n
        for position, card in enumerate(deck):
            seat = (dealer + 1 + position) % n
            hands[seat] |= 1 << card
            reserves[seat] = card  # each seat's last card dealt ends up here
        for seat in range(n):
            hands[seat] &= ~(1 << reserves[seat])
        return cls._make(
            game, dealer=dealer, hands=tuple(hands), reserves=tuple(reserves), declared=0,
            pile=(), to_move=(dealer + 1) % n,
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
        s = cls.__new__(cls)
        s._g = game
        s._dealer = dealer
        s._hands = hands
        s._known = known if known is not None else (0,) * game.players
        s._reserves = reserves
        s._declared = declared
        s._pile = pile
        s._removed = removed
        s._phase = RESPOND if pile else LEAD
        s._to_move = to_move
        s._in = sum(1 << p for p in range(game.players) if hands[p])
        s._out_order = out_order
        s._begin()
        return s

    def _child(self) -> VolynshchikState:
        s = VolynshchikState.__new__(VolynshchikState)
        s._g = self._g
        s._dealer = self._dealer
        s._hands = self._hands
        s._known = self._known
        s._reserves = self._reserves
        s._declared = self._declared
        s._pile = self._pile
        s._removed = self._removed
        s._phase = self._phase
        s._to_move = self._to_move
        s._in = self._in
        s._out_order = self._out_order
        s._ply = self._ply + 1
        s._seen = self._seen
        s._seen_len = self._seen_len
        s._result = None
        s._end = None
        return s

    def _position(self) -> tuple:
        return (self._hands, self._pile, self._declared, self._to_move, self._phase, self._in)

    # -- public reading --------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        return None if self._phase == OVER else self._to_move

    def trump_of(self, seat: int) -> int | None:
        """Return the suit index of the seat's declared trump, or None."""
        if self._declared >> seat & 1:
            return self._reserves[seat] // 9
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
            trump = self._reserves[seat] // 9
            if top // 9 != trump:
                covers |= hand & SUIT_MASKS[trump]
        return covers, natural

    def _legal(self) -> list[dict]:
        phase = self._phase
        if phase == LEAD:
            return [{"type": "lead", "card": c} for c in names(self._hands[self._to_move])]
        covers, natural = self._covers()
        moves = [{"type": "cover", "card": c} for c in names(covers)]
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
            only_keys(move, ("type", "card"))
            card = parse_card(move.get("card"))
        elif kind in ("take", "declare"):
            only_keys(move, ("type",))
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
        if card // 9 == top // 9:
            return f"{card_name} cannot cover {top_name} (lower rank, same suit)"
        if trump is None:
            return (
                f"{card_name} cannot cover {top_name} (other suit, and seat {self._to_move} "
                "has declared no trump)"
            )
        if top // 9 == trump:
            return f"{card_name} cannot cover {top_name} (lower rank, same suit)"
        return f"{card_name} cannot cover {top_name} (other suit, not seat's declared trump)"

    def _lead(self, card: int) -> VolynshchikState:
        s = self._child()
        seat = self._to_move
        hand = s._give_up(seat, 1 << card)
        s._pile = self._pile + (card,)
        s._log = (seat, {"type": "lead", "card": CARD_NAMES[card]}, self._log)
        s._phase = RESPOND
        if not hand:
            # His last card: he is out, and the next player faces it on the pile.
            if s._go_out(seat):
                return s
            s._to_move = self._g._next[s._in][seat]
            s._settle(irreversible=True)
            return s
        s._to_move = self._g._next[s._in][seat]
        s._settle(irreversible=False)
        return s

    def _cover(self, card: int) -> VolynshchikState:
        s = self._child()
        seat = self._to_move
        hand = s._give_up(seat, 1 << card)
        s._log = (seat, {"type": "cover", "card": CARD_NAMES[card]}, self._log)
        if not hand:
            # Covering with his last card: he is out and the whole pile leaves play.
            removed = self._removed | 1 << card
            for c in self._pile:
                removed |= 1 << c
            s._removed = removed
            s._pile = ()
            s._phase = LEAD
            if s._go_out(seat):
                return s
            s._to_move = self._g._next[s._in][seat]
            s._settle(irreversible=True)
            return s
        s._pile = self._pile + (card,)
        s._phase = LEAD  # his own move: the same seat leads onto the pile
        s._settle(irreversible=False)
        return s

    def _take(self) -> VolynshchikState:
        s = self._child()
        seat = self._to_move
        top = self._pile[-1]
        hands = list(self._hands)
        hands[seat] |= 1 << top
        s._hands = tuple(hands)
        known = list(self._known)
        known[seat] |= 1 << top
        s._known = tuple(known)
        s._pile = self._pile[:-1]
        s._log = (seat, {"type": "take"}, self._log)
        if not s._pile:
            # He took the whole pile: his turn ends, the next player leads.
            s._phase = LEAD
            s._to_move = self._g._next[self._in][seat]
        s._settle(irreversible=False)
        return s

    def _declare(self) -> VolynshchikState:
        s = self._child()
        seat = self._to_move
        s._declared = self._declared | 1 << seat
        s._log = (seat, {"type": "declare"}, self._log)
        s._settle(irreversible=True)
        return s

    def _go_out(self, seat: int) -> bool:
        """Take ``seat`` out of the deal; return True when that ends it."""
        self._in &= ~(1 << seat)
        self._out_order = self._out_order + (seat,)
        if self._in & (self._in - 1) == 0:
            self._finish(self._in.bit_length() - 1, "loser")
            return True
        return False

    # -- views and serialisation -----------------------------------------------------

    def view(self, seat: int | None = None) -> dict:
        """Return what ``seat`` may see (None: a spectator), plus the public history.

        Hidden: other hands (except cards everyone saw taken into them) and every
        reserve card that its owner has not turned up by declaring.
        """
        n = self._g.players
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < n):
            raise ValueError(f"seat must be from 0 to {n - 1}")
        revealed = [
            CARD_NAMES[self._reserves[p]] if self._declared >> p & 1 else None
            for p in range(n)
        ]
        view = {
            "game": "volynshchik",
            "players": n,
            "deck_size": DECK_SIZE,
            "seat": seat,
            "dealer": self._dealer,
            "phase": PHASE_NAMES[self._phase],
            "to_move": self.to_move,
            "hand_sizes": [h.bit_count() for h in self._hands],
            "pile": [CARD_NAMES[c] for c in self._pile],
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
        view["hands"] = [names(h) for h in self._hands]
        view["reserves"] = [CARD_NAMES[c] for c in self._reserves]
        return view

    def to_json(self) -> dict:
        """Return everything needed to rebuild this state exactly (hidden cards included)."""
        return {
            "game": "volynshchik",
            "options": self._g.options,
            "dealer": self._dealer,
            "hands": [names(h) for h in self._hands],
            "known": [names(k) for k in self._known],
            "reserves": [CARD_NAMES[c] for c in self._reserves],
            "declared": [p for p in range(self._g.players) if self._declared >> p & 1],
            "pile": [CARD_NAMES[c] for c in self._pile],
            "removed": names(self._removed),
            "phase": PHASE_NAMES[self._phase],
            "to_move": self._to_move,
            **self._progress_json(),
        }

    @classmethod
    def _from_json(cls, game: VolynshchikGame, data: dict) -> VolynshchikState:
        try:
            s = cls.__new__(cls)
            s._g = game
            s._dealer = data["dealer"]
            s._hands = tuple(C.mask_of(h) for h in data["hands"])
            s._known = tuple(C.mask_of(k) for k in data["known"])
            s._reserves = tuple(C.CARD_INDEX[c] for c in data["reserves"])
            s._declared = sum(1 << p for p in data["declared"])
            s._pile = tuple(C.CARD_INDEX[c] for c in data["pile"])
            s._removed = C.mask_of(data["removed"])
            s._phase = PHASE_NAMES.index(data["phase"])
            s._to_move = data["to_move"]
            s._restore_progress(data)
            check_cards_once(
                [*data["hands"], data["reserves"], data["pile"], data["removed"]], DECK_SIZE
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a serialised Volynshchik state: {exc!r}") from exc
        return s

    def __repr__(self) -> str:
        return (
            f"<VolynshchikState ply={self._ply} {PHASE_NAMES[self._phase]} "
            f"to_move={self.to_move} hands={[names(h) for h in self._hands]} "
            f"pile={[CARD_NAMES[c] for c in self._pile]}>"
        )
