"""Tournament schedules as pure data: who sits where, in which round, with which deck.

No Django here (of the project, the engine's deck shuffle only). Entrants are whatever
hashable values the caller uses (bot ids).

A *pairing* is one combination of ``players`` entrants at a table (for two players, a
pair). Each pairing plays ``games_per_pairing`` matches per cycle, cycling through the
seat rotations of the table, so that every entrant sits in every seat equally often;
``games_per_pairing`` must therefore be a multiple of ``players``. A round-robin is one
cycle, a double round-robin two. A *gauntlet* (cutechess's) is one cycle of only the
tables where the first entrant, the candidate, sits: with two players it meets every
other entrant, with more it meets every combination of the others; the others never
meet without it.

Matches are grouped in *blocks* of one match per seat rotation of every pairing. A block
is a round: every pairing plays once in each seat rotation, all of a round's matches can
be played at the same time, and the ratings are refitted between rounds. With duplicate
deals a block is also a deck: every match of the round is dealt the same deck, so every
entrant of every table holds every hand of it (``deck`` numbers the decks; each round's
deck is dealt from a deal group's secret seed: ``tournaments.services``).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

FORMATS = ("round_robin", "double_round_robin", "gauntlet")
# How many times each format plays its tables.
_CYCLES = {"round_robin": 1, "double_round_robin": 2, "gauntlet": 1}


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    """One match of a schedule: seat ``i`` is held by ``table[i]``."""

    index: int
    round: int
    pairing: int
    rotation: int
    table: tuple[Hashable, ...]
    deck: int | None


def cycles_of(format: str) -> int:
    """Return how many times a format plays the whole round-robin."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; the formats are {', '.join(FORMATS)}")
    return _CYCLES[format]


def check_options(*, entrants: int, players: int, games_per_pairing: int) -> None:
    """Raise ValueError unless a schedule can be built from these numbers."""
    if players < 2:
        raise ValueError("a table has at least 2 players")
    if entrants < players:
        raise ValueError(f"a {players}-player tournament needs at least {players} entrants")
    if games_per_pairing < 1 or games_per_pairing % players:
        raise ValueError(
            f"games per pairing must be a positive multiple of {players} (the number of "
            "players), so that every entrant sits in every seat equally often"
        )


def rotation(table: Sequence[Hashable], shift: int) -> tuple[Hashable, ...]:
    """Return the table turned by ``shift`` seats: seat ``i`` gets ``table[(i + shift) % n]``."""
    n = len(table)
    return tuple(table[(i + shift) % n] for i in range(n))


def tables_of(
    entrants: Sequence[Hashable], *, players: int, format: str
) -> list[tuple[Hashable, ...]]:
    """Return the tables (pairings) a format plays, each in its first rotation."""
    if format == "gauntlet":
        candidate, others = entrants[0], entrants[1:]
        return [(candidate, *rest) for rest in itertools.combinations(others, players - 1)]
    return list(itertools.combinations(entrants, players))


def rounds_total(*, players: int, games_per_pairing: int, format: str) -> int:
    """Return the number of rounds of a schedule."""
    return cycles_of(format) * games_per_pairing // players


def build_schedule(
    entrants: Sequence[Hashable],
    *,
    players: int,
    games_per_pairing: int,
    format: str = "round_robin",
    duplicate: bool = False,
) -> list[ScheduledMatch]:
    """Return every match of the tournament, round by round.

    Within a round the order is pairing by pairing (``itertools.combinations`` order of
    ``entrants``; in a gauntlet, the candidate ``entrants[0]`` followed by each
    combination of the others), each in rotation order 0, 1, ...
    """
    if len(set(entrants)) != len(entrants):
        raise ValueError("an entrant can enter a tournament only once")
    check_options(entrants=len(entrants), players=players, games_per_pairing=games_per_pairing)
    cycles_of(format)
    pairings = tables_of(entrants, players=players, format=format)
    matches: list[ScheduledMatch] = []
    for round_number in range(
        rounds_total(players=players, games_per_pairing=games_per_pairing, format=format)
    ):
        for pairing, table in enumerate(pairings):
            for shift in range(players):
                matches.append(
                    ScheduledMatch(
                        index=len(matches),
                        round=round_number,
                        pairing=pairing,
                        rotation=shift,
                        table=rotation(table, shift),
                        deck=round_number if duplicate else None,
                    )
                )
    return matches
