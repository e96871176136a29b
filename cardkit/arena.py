"""The local arena: bots play deals on this machine through the arena's own engine.

Every seat is asked with the request the server sends (``cardkit.protocol.move_request``),
built-in players choose with the server's generators (``decision_rng``), a fault forfeits
the deal as it would forfeit a match, and a deal's replay is the document of
``GET /api/v1/matches/{id}/replay/`` (``cardkit.engine.replay``), which the site's
``/replays/open/`` page shows.

    >>> from cardkit.arena import play_deals, standings
    >>> from cardkit.specs import load_player
    >>> players = [load_player("greedy"), load_player("random")]
    >>> deals = play_deals("durak", {"players": 2}, players, games=10)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cardkit.engine import load_game
from cardkit.engine.cards import shuffled_deck
from cardkit.engine.replay import replay_document, replay_steps
from cardkit.fairness import seed_commitment
from cardkit.players import decision_rng
from cardkit.protocol import DEFAULT_TIME_LIMIT, move_request
from cardkit.specs import Player
from cardkit.stats.proportions import wilson_interval


@dataclass(frozen=True, slots=True)
class LocalMove:
    """A move of a local deal's log, shaped like the server's ``games.models.Move``."""

    seat: int
    move: dict
    received_at: datetime
    time_taken: float
    comment: str = ""


@dataclass(frozen=True)
class Deal:
    """One deal played: who sat where (indexes into the players), and how it ended."""

    number: int
    game: str
    options: dict[str, Any]
    seed: str
    dealer: int
    seating: tuple[int, ...]
    log: list[LocalMove]
    result: dict
    end_reason: str
    fault: tuple[int, str, str] | None = None  # (seat, fault, detail) of a forfeit
    names: tuple[str, ...] = field(default=())

    @property
    def loser(self) -> int | None:
        """The player (index into the players, not the seat) who lost, or None."""
        seat = self.result.get("loser")
        return None if seat is None else self.seating[seat]

    def replay(self) -> dict:
        """Return the deal's replay document, as the API gives a finished match's."""
        game = load_game(self.game, **self.options)
        state = game.deal(seed=self.seed, dealer=self.dealer)
        states = [state]
        for entry in self.log:
            state = state.play(entry.move)
            states.append(state)
        # A local bot's time is all its own: no queue stands between the arena and it.
        steps = replay_steps(
            states, self.log, complete=True, think_time=lambda move: move.time_taken,
            comments=True,
        )
        for step in steps:
            if step["received_at"] is not None:
                step["received_at"] = _api_datetime(step["received_at"])
        return replay_document(
            match=self.number,
            status="finished",
            complete=True,
            ply=len(self.log),
            seed=self.seed,
            seed_commitment=seed_commitment(self.seed),
            decks=[shuffled_deck(self.seed, game.deck_size)],
            result=self.result,
            end_reason=self.end_reason,
            steps=steps,
            seats=[self.names[p] for p in self.seating] if self.names else None,
        )


def _api_datetime(moment: datetime) -> str:
    # As Django REST framework writes a UTC datetime.
    text = moment.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def deal_seed(base: str, number: int) -> str:
    """Return the seed of deck ``number``: 64 hex characters, like a match's seed."""
    return hashlib.sha256(f"cardserver-kit:{base}:{number}".encode()).hexdigest()


def request_options(game: str, options: dict[str, Any]) -> dict[str, Any]:
    """Return the ``options`` of the server's request for a single deal of ``game``."""
    engine = load_game(game, **options).options
    # The server names a Durak match's format (a deal or a series to ДУРАК); a local deal
    # is a single deal.
    return {**engine, "format": "deal"} if game == "durak" else engine


def play_deal(
    game_name: str,
    options: dict[str, Any],
    players: list[Player],
    *,
    seating: tuple[int, ...],
    seed: str,
    dealer: int = 0,
    number: int = 1,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> Deal:
    """Play one deal with ``players[seating[seat]]`` in each seat and return it."""
    game = load_game(game_name, **options)
    wire_options = request_options(game_name, options)
    state = game.deal(seed=seed, dealer=dealer)
    log: list[LocalMove] = []
    names = tuple(player.name for player in players)
    while not state.is_over:
        seat = state.to_move
        request = move_request(
            state=state,
            match_id=number,
            game=game_name,
            options=wire_options,
            time_limit=time_limit,
        )
        ply = len(log)
        answer = players[seating[seat]].ask(request, time_limit, decision_rng(seed, seat, ply))
        if not answer.ok:
            # As the server ends a match when a bot faults: the seat is the loser.
            result = {"loser": seat, "out_order": state.view(None)["out_order"]}
            return Deal(
                number, game_name, dict(options), seed, dealer, seating, log, result,
                str(answer.fault), (seat, str(answer.fault), answer.detail), names,
            )
        state = state.play(answer.move)
        log.append(
            LocalMove(seat, answer.move, datetime.now(UTC), answer.elapsed, answer.comment)
        )
    return Deal(
        number, game_name, dict(options), seed, dealer, seating, log, state.result,
        state.end_reason or "", None, names,
    )


def seatings(players: int, number: int, *, duplicate: bool) -> list[tuple[int, ...]]:
    """Return who sits where for deck ``number``: every rotation when ``duplicate``.

    With duplicate deals each deck is played once per rotation of the seats, so every
    player holds every hand of it; otherwise the seats rotate from one deck to the next.
    """
    rotations = range(players) if duplicate else [number % players]
    return [tuple((seat + shift) % players for seat in range(players)) for shift in rotations]


def play_deals(
    game_name: str,
    options: dict[str, Any],
    players: list[Player],
    *,
    games: int,
    duplicate: bool = False,
    seed: str = "0",
    time_limit: float = DEFAULT_TIME_LIMIT,
    on_deal: Callable[[Deal], None] | None = None,
) -> list[Deal]:
    """Play ``games`` decks (each once per rotation when ``duplicate``); return the deals."""
    count = load_game(game_name, **options).players
    if len(players) != count:
        raise ValueError(f"{count} players sit at this game; {len(players)} bots were given")
    deals = []
    for deal in iter_deals(
        game_name, options, players, games=games, duplicate=duplicate, seed=seed,
        time_limit=time_limit,
    ):
        deals.append(deal)
        if on_deal is not None:
            on_deal(deal)
    return deals


def iter_deals(
    game_name: str,
    options: dict[str, Any],
    players: list[Player],
    *,
    games: int,
    duplicate: bool,
    seed: str,
    time_limit: float,
) -> Iterator[Deal]:
    count = len(players)
    number = 0
    for deck in range(games):
        deck_seed = deal_seed(seed, deck)
        for seating in seatings(count, deck, duplicate=duplicate):
            number += 1
            yield play_deal(
                game_name, options, players, seating=seating, seed=deck_seed,
                dealer=0 if duplicate else deck % count, number=number, time_limit=time_limit,
            )


@dataclass(frozen=True)
class Standing:
    """One player's record: deals, losses (the fool), draws, faults and the loss rate."""

    name: str
    deals: int
    losses: int
    draws: int
    faults: int

    @property
    def loss_rate(self) -> float:
        return self.losses / self.deals if self.deals else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the loss rate."""
        return wilson_interval(self.losses, self.deals)


def standings(deals: list[Deal], names: list[str]) -> list[Standing]:
    """Return every player's record, the lowest loss rate first."""
    rows = []
    for index, name in enumerate(names):
        mine = [deal for deal in deals if index in deal.seating]
        rows.append(
            Standing(
                name=name,
                deals=len(mine),
                losses=sum(deal.loser == index for deal in mine),
                draws=sum(deal.result.get("loser") is None for deal in mine),
                faults=sum(
                    deal.fault is not None and deal.seating[deal.fault[0]] == index
                    for deal in mine
                ),
            )
        )
    return sorted(rows, key=lambda row: (row.loss_rate, row.name))


def write_replay(deal: Deal, directory: Path) -> Path:
    """Write the deal's replay as ``deal-<number>.json`` in ``directory``; return the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"deal-{deal.number:05d}.json"
    path.write_text(json.dumps(deal.replay(), ensure_ascii=False, separators=(",", ":")))
    return path
