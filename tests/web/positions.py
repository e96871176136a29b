"""Matches in chosen positions for the layout tests, built through the engine and the services.

A position (an 18-card Durak hand, a Volynshchik pile of 20) is found by playing deals
on the engine with a fixed policy, seed after seed; the match is then created as a
practice match with that seed's deck given explicitly, and the same moves are submitted
through ``match_move_submit``, as a browser or a bot would.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from cardkit.engine import load_game
from cardkit.engine.cards import shuffled_deck
from games.models import Match
from games.move_services import match_move_submit
from games.seating import SeatHolder
from games.services import match_create

RANKS = "6789TJQKA"
DECK_SIZE = {"durak": 36, "volynshchik": 32}


def _low(move: dict) -> int:
    cards = move.get("cards") or [move.get("card") or "6"]
    return len(cards) * 10 + RANKS.index(cards[0][0])


def greedy_policy(state, rng: random.Random) -> dict:
    """Cover when it can (lowest card), else attack or lead low, else take."""
    legal = state.legal_moves()
    for kind in ("cover", "beat"):
        moves = [m for m in legal if m["type"] == kind]
        if moves:
            return moves[0] if kind == "beat" else min(moves, key=_low)
    for kind in ("attack", "lead"):
        moves = [m for m in legal if m["type"] == kind]
        if moves:
            return min(moves, key=_low) if kind == "attack" else rng.choice(moves)
    return next((m for m in legal if m["type"] == "take"), legal[0])


def taker_policy(state, rng: random.Random) -> dict:
    """Seat 0 takes every attack (its hand grows); the others play ``greedy_policy``."""
    if state.to_move == 0:
        take = next((m for m in state.legal_moves() if m["type"] == "take"), None)
        if take is not None:
            return take
    return greedy_policy(state, rng)


def find_position(
    game: str,
    players: int,
    stop: Callable[[object], bool],
    *,
    policy: Callable = greedy_policy,
    seeds: int = 500,
) -> tuple[list[str], list[dict]]:
    """Return a deck and the moves from its deal to the first state ``stop`` accepts."""
    engine = load_game(game, players=players)
    for seed in range(seeds):
        deck = shuffled_deck(seed, DECK_SIZE[game])
        state = engine.deal(list(deck))
        moves: list[dict] = []
        rng = random.Random(seed)
        while not state.is_over:
            if stop(state):
                return deck, moves
            move = policy(state, rng)
            moves.append(move)
            state = state.play(move)
    raise AssertionError(f"no {game} deal of {players} reached the position in {seeds} seeds")


def match_at(
    users: list, game: str, stop: Callable[[object], bool] = lambda state: True, **find
) -> Match:
    """Create a practice match of ``users`` and play it to the position ``stop`` accepts."""
    deck, moves = find_position(game, len(users), stop, **find)
    match = match_create(
        creator=users[0],
        game=game,
        players=len(users),
        seats=[SeatHolder(user=user) for user in users],
        decks=[deck],
        move_time_limit=3600.0,
    )
    for ply, move in enumerate(moves):
        match.refresh_from_db()
        match_move_submit(match_id=match.pk, seat=match.to_move, ply=ply, move=move)
    match.refresh_from_db()
    return match


def hand_of(seat: int, size: int) -> Callable[[object], bool]:
    """A stop: ``seat`` holds at least ``size`` cards and is to move."""
    return lambda state: state.to_move == seat and len(state.view(seat)["hand"]) >= size


def pile_of(size: int, seat: int = 0) -> Callable[[object], bool]:
    """A stop: the Volynshchik pile holds at least ``size`` cards and ``seat`` is to move."""
    return lambda state: state.to_move == seat and len(state.view(None)["pile"]) >= size


def to_move(seat: int) -> Callable[[object], bool]:
    """A stop: ``seat`` is to move (at the deal, or after the first moves)."""
    return lambda state: state.to_move == seat
