"""Sample full states ("worlds") consistent with everything one seat has seen.

A world is built from the seat's view alone: its own hand and reserve, the public cards
(table or pile, discard, removed cards, cards everyone saw go into a hand, declared
reserves, the trump card) stay where they are, and the unseen cards are shuffled into
the places the seat cannot see.  The world is written in the engine's ``to_json()`` form
and rebuilt with ``load_state``, so the engine's own rules play it out.

Unseen cards are always handled in canonical order before ``rng`` touches them: sets of
card strings iterate in an order that changes between processes, which would break the
exact replay of a built-in player's decisions.
"""

from __future__ import annotations

import random

from cardkit.engine import State, load_state
from cardkit.engine.cards import CARD_INDEX, deck_cards

RANKS = "6789TJQKA"
# How often a Volynshchik world is redrawn when the inferred constraints paint the
# sampler into a corner, before it falls back to ignoring them.
CONSTRAINED_ATTEMPTS = 20


def sample_world(view: dict, rng: random.Random) -> State:
    """Return a full state that gives ``view`` to its seat, hidden cards drawn with ``rng``."""
    if view["game"] == "durak":
        return load_state(durak_world(view, rng))
    return load_state(volynshchik_world(view, rng))


def _canonical(cards: set[str]) -> list[str]:
    return sorted(cards, key=CARD_INDEX.__getitem__)


def _progress(view: dict) -> dict:
    """Return the last keys of a world's ``to_json()`` form: the deal's public progress.

    The world starts its own repetition count and is not over (a seat views it to move).
    """
    return {
        "in_deal": list(view["in_deal"]),
        "out_order": list(view["out_order"]),
        "ply": view["ply"],
        "history": view["history"],
        "positions": [],
        "result": None,
        "end_reason": None,
    }


# -- Durak -------------------------------------------------------------------------------


def durak_world(view: dict, rng: random.Random) -> dict:
    """Return a Durak state in ``to_json()`` form consistent with ``view``.

    Each other hand keeps its known cards and gets unseen cards up to its size; the talon
    gets the rest above the face-up trump card, which stays at the bottom while the talon
    lasts.  Nothing is inferred from play: in this Durak every move is a free choice.
    """
    seat = view["seat"]
    n = view["players"]
    talon_size = view["talon_size"]
    trump_card = view["trump_card"]
    seen = set(view["hand"]) | set(view["table"]) | set(view["discard"])
    for other in range(n):
        seen.update(view["known_cards"][other])
    if talon_size:
        seen.add(trump_card)
    unseen = _canonical(set(deck_cards(view["deck_size"])) - seen)
    rng.shuffle(unseen)
    hands = []
    position = 0
    for other in range(n):
        if other == seat:
            hands.append(list(view["hand"]))
            continue
        known = view["known_cards"][other]
        need = view["hand_sizes"][other] - len(known)
        hands.append(list(known) + unseen[position : position + need])
        position += need
    talon = unseen[position:] + ([trump_card] if talon_size else [])
    if len(talon) != talon_size or any(len(hands[p]) != view["hand_sizes"][p] for p in range(n)):
        raise ValueError("the view's card counts do not add up to the deck")
    return {
        "game": "durak",
        "options": {"players": n, "deck_size": view["deck_size"]},
        "dealer": view["dealer"],
        # The opening rule only matters when the cards are dealt; this deal is past that.
        "opening": "lowest_trump",
        "hands": hands,
        "known": [list(k) for k in view["known_cards"]],
        "talon": talon,
        "trump_card": trump_card,
        "table": list(view["table"]),
        "discard": list(view["discard"]),
        "phase": view["phase"],
        "attacker": view["attacker"],
        "defender": view["defender"],
        **_progress(view),
    }


# -- Volynshchik -------------------------------------------------------------------------


def volynshchik_world(view: dict, rng: random.Random) -> dict:
    """Return a Volynshchik state in ``to_json()`` form consistent with ``view``.

    Unseen cards fill the other hands (beyond their known cards) and the other seats'
    unrevealed reserve cards.  A seat that took or declared faced a top card it could not
    cover with a higher card of its suit, and every hidden card of a hand has been there
    since the deal (cards only join a hand by the deal or, publicly, by taking), so such
    cards are kept out of that hand.
    """
    seat = view["seat"]
    n = view["players"]
    seen = set(view["hand"]) | set(view["pile"]) | set(view["removed"]) | {view["reserve"]}
    for other in range(n):
        seen.update(view["known_cards"][other])
        if view["revealed_reserves"][other]:
            seen.add(view["revealed_reserves"][other])
    unseen = _canonical(set(deck_cards(view["deck_size"])) - seen)
    need = [
        0 if p == seat else view["hand_sizes"][p] - len(view["known_cards"][p]) for p in range(n)
    ]
    reserve_seats = [p for p in range(n) if p != seat and not view["revealed_reserves"][p]]
    if len(unseen) != sum(need) + len(reserve_seats):
        raise ValueError("the view's card counts do not add up to the deck")
    forbidden = cannot_hold(view)
    placed = None
    if any(forbidden):
        for _attempt in range(CONSTRAINED_ATTEMPTS):
            placed = _place(unseen, need, reserve_seats, forbidden, rng)
            if placed is not None:
                break
    if placed is None:
        placed = _place(unseen, need, reserve_seats, [frozenset()] * n, rng)
    hidden, reserves_drawn = placed
    hands = [
        list(view["hand"]) if p == seat else list(view["known_cards"][p]) + hidden[p]
        for p in range(n)
    ]
    reserves = [
        view["reserve"] if p == seat else view["revealed_reserves"][p] or reserves_drawn[p]
        for p in range(n)
    ]
    return {
        "game": "volynshchik",
        "options": {"players": n, "deck_size": view["deck_size"]},
        "dealer": view["dealer"],
        "hands": hands,
        "known": [list(k) for k in view["known_cards"]],
        "reserves": reserves,
        "declared": [p for p in range(n) if view["declared"][p]],
        "pile": list(view["pile"]),
        "removed": list(view["removed"]),
        "phase": view["phase"],
        "to_move": view["to_move"],
        **_progress(view),
    }


def _place(
    unseen: list[str],
    need: list[int],
    reserve_seats: list[int],
    forbidden: list[frozenset[str]],
    rng: random.Random,
) -> tuple[list[list[str]], dict[int, str]] | None:
    """Deal ``unseen`` into the hidden hand slots and reserves; None on a dead end.

    The cards with the fewest places to go are placed first; each goes to a free slot
    drawn uniformly among the slots it may fill.
    """
    cards = list(unseen)
    rng.shuffle(cards)
    n = len(need)
    room = list(need)
    cards.sort(key=lambda c: sum(1 for p in range(n) if room[p] and c not in forbidden[p]))
    hidden: list[list[str]] = [[] for _ in range(n)]
    open_reserves = list(reserve_seats)
    reserves: dict[int, str] = {}
    for card in cards:
        places = [p for p in range(n) if room[p] and card not in forbidden[p]]
        total = sum(room[p] for p in places) + len(open_reserves)
        if not total:
            return None
        pick = rng.randrange(total)
        for p in places:
            if pick < room[p]:
                hidden[p].append(card)
                room[p] -= 1
                break
            pick -= room[p]
        else:
            reserves[open_reserves.pop(pick)] = card
    return hidden, reserves


def cannot_hold(view: dict) -> list[frozenset[str]]:
    """Return, per seat, the cards its hidden hand cannot hold given its takes and declares.

    Replay the pile through the public history: a `take` or `declare` by a seat facing
    card c shows that it held no higher card of c's suit, then and so ever since.  Return
    no constraint at all if the replayed pile disagrees with the view's.
    """
    n = view["players"]
    higher: list[set[str]] = [set() for _ in range(n)]
    pile: list[str] = []
    history = view["history"]
    for i, entry in enumerate(history):
        seat, move = entry["seat"], entry["move"]
        kind = move["type"]
        if kind in ("take", "declare"):
            if not pile:
                return [frozenset()] * n
            top = pile[-1]
            higher[seat].update(r + top[1] for r in RANKS[RANKS.index(top[0]) + 1 :])
            if kind == "take":
                pile.pop()
        elif kind == "lead":
            pile.append(move["card"])
        elif kind == "cover":
            pile.append(move["card"])
            # Covering with one's last card removes the pile; otherwise he leads next.
            following = history[i + 1]["seat"] if i + 1 < len(history) else view["to_move"]
            if following != seat:
                pile.clear()
    if pile != list(view["pile"]):
        return [frozenset()] * n
    return [frozenset(h) for h in higher]


__all__ = ["cannot_hold", "durak_world", "sample_world", "volynshchik_world"]
