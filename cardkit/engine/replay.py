"""A match's replay document: the one builder of ``GET /api/v1/matches/{id}/replay/``.

The server's replay view and the bot kit's local arena (``cardkit.arena``) both write
replays with ``replay_document``, so a file from either opens in the site's replay viewer
(``/replays/open/``). Pure Python, no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol


class LoggedMove(Protocol):
    """One move of a match's log, as the server stores it (``games.models.Move``)."""

    seat: int
    move: dict
    received_at: datetime | None
    time_taken: float | None
    # The bot's word on the move ("" for none).
    comment: str


def replay_steps(
    states: Iterable,
    log: Sequence[LoggedMove],
    *,
    complete: bool,
    only: int | None = None,
    think_time: Callable[[LoggedMove], float | None] | None = None,
    comments: bool = False,
) -> list[dict]:
    """Return the steps of a replay: the state after 0, 1, ... moves with the move before it.

    ``states`` yields the engine state after each ply (``len(log) + 1`` of them). A
    ``complete`` (finished) match shows every hand (``reveal``); otherwise a step shows the
    public view only. ``only`` keeps the single step of that ply. ``think_time`` gives a
    move's time of the bot's own (None for every move without it). With ``comments``
    each step carries its move's comment (None for none); without, every ``comment`` is
    None: a match in play hides its bots' comments from its opponents and spectators.
    """
    steps = []
    for ply, state in enumerate(states):
        if only is not None and ply != only:
            continue
        shown = state.reveal() if complete else state.view(None)
        # The steps are the log: the history inside each state would repeat it.
        shown.pop("history", None)
        last = log[ply - 1] if ply else None
        steps.append(
            {
                "ply": ply,
                "seat": last.seat if last else None,
                "move": last.move if last else None,
                "received_at": last.received_at if last else None,
                "time_taken": last.time_taken if last else None,
                "think_time": think_time(last) if last and think_time else None,
                "comment": (last.comment or None) if last and comments else None,
                "state": shown,
            }
        )
    return steps


def replay_document(
    *,
    match: int,
    status: str,
    complete: bool,
    ply: int,
    seed: str | None,
    seed_commitment: str,
    decks: list[list[str]] | None,
    result: dict | None,
    end_reason: str,
    steps: list[dict],
    forfeit_seat: int | None = None,
    forfeit_reason: str = "",
    seats: list[str] | None = None,
    seat_versions: list[str | None] | None = None,
) -> dict[str, Any]:
    """Return the replay document around ``steps`` (from ``replay_steps``).

    ``forfeit_seat`` and ``forfeit_reason`` say who lost by forfeit and why (a timeout, a
    resignation, a bot's fault), when the match did not end by the rules.

    ``seats`` (the players' names, by seat): the API and the local arena's files both give
    them, and the viewer shows them. ``seat_versions``: by seat, the label of the bot's
    version that played it (None for a person, or where there are no versions: a local
    arena's bots), so that a replay says which code lost, not only whose.
    """
    document: dict[str, Any] = {
        "match": match,
        "status": status,
        "complete": complete,
        "ply": ply,
        "seed": seed,
        "seed_commitment": seed_commitment,
        "decks": decks,
        "result": result,
        "end_reason": end_reason,
        "forfeit_seat": forfeit_seat,
        "forfeit_reason": forfeit_reason,
        "steps": steps,
    }
    if seats is not None:
        document["seats"] = list(seats)
    if seat_versions is not None:
        document["seat_versions"] = list(seat_versions)
    return document
