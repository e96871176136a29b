"""Reads of matches that several views, services and tasks share; none of them writes.

The state of a match is what the engine gives when it replays the log. ``match_state``
takes it from the cached snapshot when that is current, and otherwise replays the log;
``games.services.match_snapshot_refresh`` is the one that also stores the replay.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Prefetch, QuerySet

from games.engine import DurakSeries, EndReason, IllegalMove, load_game, load_state
from games.engine.cards import shuffled_deck
from games.engine.replay import replay_steps
from games.fairness import commitment_matches
from games.models import Match, Move, Seat
from games.rows import seat_indices

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

# A finished match's end_reason is one of these or a forfeit code ("timeout", "resign"...).
ENGINE_END_REASONS = frozenset(EndReason)


# Who holds the seats of a match is fixed once it has started (nothing changes a seat
# after that), so a process remembers the answer instead of asking the database on every
# request of a playing client. Bounded, least recently used first out.
_SEATS_HELD: OrderedDict[tuple[int, int], list[int]] = OrderedDict()
_SEATS_HELD_MAX = 20_000
_SEATS_HELD_LOCK = threading.Lock()


def seats_of(user: User | AnonymousUser | None, match: Match | int) -> list[int]:
    """Return the indices of the seats ``user`` holds in the match, lowest first.

    A user holds a seat directly (``Seat.user``) or through a client bot whose account it
    is (``Seat.bot.account``).
    """
    if user is None or not user.is_authenticated:
        return []
    match_id = match if isinstance(match, int) else match.pk
    key = (match_id, user.pk)
    with _SEATS_HELD_LOCK:
        held = _SEATS_HELD.get(key)
        if held is not None:
            _SEATS_HELD.move_to_end(key)
            return list(held)
    prefetched = getattr(match, "_prefetched_objects_cache", {}).get("seats")
    if prefetched is not None:
        held = [
            seat.index
            for seat in prefetched
            if seat.user_id == user.pk or (seat.bot_id and seat.bot.account_id == user.pk)
        ]
    else:
        held = seat_indices(match_id, user.pk)
    if isinstance(match, Match) and match.status != Match.Status.WAITING:
        seats_remember(match_id=match_id, user=user, seats=held)
    return held


def seats_forget_all() -> None:
    """Forget every remembered seat holder (tests, whose match ids repeat, call it)."""
    with _SEATS_HELD_LOCK:
        _SEATS_HELD.clear()


def seats_remember(*, match_id: int, user: User, seats: list[int]) -> None:
    """Remember the seats ``user`` holds in a match that has started (they never change)."""
    with _SEATS_HELD_LOCK:
        _SEATS_HELD[(match_id, user.pk)] = list(seats)
        _SEATS_HELD.move_to_end((match_id, user.pk))
        while len(_SEATS_HELD) > _SEATS_HELD_MAX:
            _SEATS_HELD.popitem(last=False)


def matches_for_listing() -> QuerySet[Match]:
    """Return matches with their seats, holders loaded in one query, and no heavy columns."""
    return (
        Match.objects.defer("snapshot", "seed", "decks")
        .select_related("created_by")
        .prefetch_related(
            Prefetch("seats", queryset=Seat.objects.select_related("user", "bot").order_by("index"))
        )
    )


def match_for_reading(match_id: int) -> Match:
    """Return one match with its seats and their holders; raise Match.DoesNotExist."""
    return (
        Match.objects.select_related("created_by")
        .prefetch_related(
            Prefetch("seats", queryset=Seat.objects.select_related("user", "bot").order_by("index"))
        )
        .get(pk=match_id)
    )


def overdue_match_ids(*, now: datetime) -> list[int]:
    """Return the ids of active matches whose move deadline is before ``now``."""
    return list(
        Match.objects.filter(status=Match.Status.ACTIVE, deadline_at__lt=now)
        .order_by("deadline_at")
        .values_list("pk", flat=True)
    )


# --- Engine states ------------------------------------------------------------------------


def match_game(match: Match):
    return load_game(match.game, players=match.players, deck_size=match.deck_size)


def match_initial_state(match: Match):
    """Return the engine state of the match before its first move (needs the secret seed)."""
    game = match_game(match)
    if match.format == Match.Format.FOOL:
        if match.decks is not None:
            return game.series(dealer=match.dealer, decks=match.decks)
        return game.series(dealer=match.dealer, seed=match.seed)
    if match.decks is not None:
        return game.deal(match.decks[0], dealer=match.dealer)
    return game.deal(seed=match.seed, dealer=match.dealer)


def match_state(match: Match):
    """Return the engine state after the match's ``ply`` moves.

    The state kept for the row (``match_state_keep``) or for the match in this process
    (``match_state_known``) when it is at that ply; else from the snapshot when it is
    current (``snapshot_ply == match.ply``); otherwise replayed from the log, and nothing
    is stored (``match_snapshot_refresh`` stores it).
    """
    kept = match.__dict__.get("_engine_state")
    if kept is not None and kept[0] == match.ply:
        return kept[1]
    known = _state_known(match)
    if known is not None:
        return known
    if match_snapshot_current(match):
        return load_state(match.snapshot)
    return match_replayed_state(match)


def match_state_keep(match: Match, state) -> None:
    """Keep ``state``, the state after the row's ``ply`` moves that this transaction
    wrote, on the row (for ``match_state`` of the same row) and, once the transaction
    commits, in this process for the match (``match_state_known``)."""
    match.__dict__["_engine_state"] = (match.ply, state)
    entry = (match.pk, match.__dict__.get("created_at"), match.ply, state)
    transaction.on_commit(lambda: _state_remember(entry))


# The engine states this process committed last, by match: (created_at, ply, state). A
# match's state after its first ``ply`` moves never changes once they are logged, so a kept
# state is right for any row read later at that ply, whoever moved the match in between;
# ``created_at`` tells a match from another given its id after a rollback (SQLite reuses
# ids whose rows were rolled back). The I/O pool records a match's answers one after
# another in the same process: its next answer's move starts from here, not from the
# snapshot's JSON, which was a tenth of its CPU. Bounded, least recently used first out.
_STATES: OrderedDict[int, tuple] = OrderedDict()
_STATES_MAX = 4096
_STATES_LOCK = threading.Lock()


def _state_remember(entry: tuple) -> None:
    match_id, created_at, ply, state = entry
    if created_at is None:
        return
    with _STATES_LOCK:
        kept = _STATES.get(match_id)
        if kept is not None and kept[0] == created_at and kept[1] > ply:
            return
        _STATES[match_id] = (created_at, ply, state)
        _STATES.move_to_end(match_id)
        while len(_STATES) > _STATES_MAX:
            _STATES.popitem(last=False)


def match_state_known(match_id: int) -> int | None:
    """Return the ply at which this process keeps the match's state, or None (so that its
    next locked read may leave the snapshot out at that ply: ``games.rows.match_row``)."""
    with _STATES_LOCK:
        kept = _STATES.get(match_id)
    return None if kept is None else kept[1]


def _state_known(match: Match):
    created_at = match.__dict__.get("created_at")
    with _STATES_LOCK:
        kept = _STATES.get(match.pk)
    if kept is None or created_at is None or kept[0] != created_at or kept[1] != match.ply:
        return None
    return kept[2]


def states_forget() -> None:
    """Forget the states kept (tests)."""
    with _STATES_LOCK:
        _STATES.clear()


def match_snapshot_current(match: Match) -> bool:
    """Return whether the match's snapshot is the state after its ``ply`` moves."""
    return match.snapshot is not None and match.snapshot_ply == match.ply


def match_replayed_state(match: Match):
    """Return the engine state after the match's ``ply`` moves, replayed from the log."""
    moves = (
        Move.objects.filter(match_id=match.pk, ply__lt=match.ply)
        .order_by("ply")
        .values_list("move", flat=True)
    )
    return _final(_replay(match, moves))


def _replay(match: Match, moves: Iterable[dict]) -> Iterator:
    """Yield the engine state after 0, 1, ... of ``moves``, from the match's first deal.

    The one replay of a log: the state, the replay steps and the verification use it.
    """
    state = match_initial_state(match)
    yield state
    for move in moves:
        state = state.play(move)
        yield state


def _final(states: Iterator):
    """Return the last of the states (the replay runs to the end of its log)."""
    (state,) = deque(states, maxlen=1)
    return state


def state_end_reason(state) -> str | None:
    """Return the engine's reason for the end of a finished deal or series."""
    if isinstance(state, DurakSeries):
        return state.deal.end_reason if state.is_over else None
    return state.end_reason


def match_decks(match: Match, final_state=None) -> list[list[str]]:
    """Return the deck of every deal the match has reached, top card first.

    Reveals hidden cards: for finished matches only.
    """
    if match.decks is not None and match.format != Match.Format.FOOL:
        return [list(deck) for deck in match.decks]
    if match.format == Match.Format.FOOL:
        series = final_state if final_state is not None else match_state(match)
        return [series.deck_of(number) for number in range(series.deal_number + 1)]
    return [shuffled_deck(match.seed, match.deck_size)]


def match_states(match: Match, moves: list[Move]) -> Iterator:
    """Yield the engine state after 0, 1, ..., len(moves) moves of the log."""
    return _replay(match, (move.move for move in moves))


def match_log(match: Match, *, up_to_ply: int | None = None) -> list[Move]:
    """Return the moves of the log in order (the first ``up_to_ply`` if given)."""
    moves = Move.objects.filter(match_id=match.pk).order_by("ply")
    limit = match.ply if up_to_ply is None else min(up_to_ply, match.ply)
    return list(moves.filter(ply__lt=limit))



def move_think_time(move: Move) -> float | None:
    """Return the seconds a bot asked over HTTP took, from its request sent to its answer
    arrived (the arena's queueing before the send is not counted); None for other moves."""
    if move.sent_at is None:
        return None
    return max(0.0, (move.received_at - move.sent_at).total_seconds())


def match_replay_steps(match: Match, *, only: int | None = None) -> list[dict]:
    """Return the steps of the match's replay: the state after each ply, with its move.

    Every state shows all hands once the match is finished, and the public view before.
    With ``only``, the one step after ``only`` moves. The match must have started.
    """
    complete = match.status == Match.Status.FINISHED
    moves = match_log(match, up_to_ply=only)
    return replay_steps(
        match_states(match, moves), moves, complete=complete, only=only,
        think_time=move_think_time,
    )


# --- Verification -------------------------------------------------------------------------


@dataclass
class Verification:
    """What ``match_verification`` found; ``ok`` when every check passed."""

    match_id: int
    seed: str
    commitment: str
    decks: list[list[str]]
    commitment_ok: bool
    replay_ok: bool
    result_ok: bool
    moves: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.commitment_ok and self.replay_ok and self.result_ok


def match_verification(match: Match) -> Verification:
    """Recompute a finished match from its revealed seed (or decks) and its log.

    Check that the commitment is the SHA-256 of the seed, that the log replays legally on
    the decks the seed gives, and that the replay ends in the stored result (for a forfeit:
    that the replay is still in play, with the forfeiting seat among the players).
    """
    problems: list[str] = []
    commitment_ok = commitment_matches(match.seed_commitment, seed=match.seed, decks=match.decks)
    if not commitment_ok:
        problems.append("the commitment is not the SHA-256 of the revealed seed or decks")
    moves = match_log(match)
    state = None
    replay_ok = True
    try:
        state = _final(match_states(match, moves))
    except (IllegalMove, ValueError) as exc:
        replay_ok = False
        problems.append(f"the log does not replay on the committed decks: {exc}")
    result_ok = False
    decks: list[list[str]] = []
    if state is not None and replay_ok:
        decks = match_decks(match, final_state=state)
        if match.end_reason in ENGINE_END_REASONS:
            result_ok = (
                state.is_over
                and state.result == match.result
                and state_end_reason(state) == match.end_reason
            )
            if not result_ok:
                problems.append("the replay does not end in the stored result")
        else:
            result_ok = (
                not state.is_over
                and match.forfeit_seat is not None
                and match.loser == match.forfeit_seat
            )
            if not result_ok:
                problems.append("the forfeit does not fit the replayed log")
    return Verification(
        match_id=match.pk,
        seed=match.seed,
        commitment=match.seed_commitment,
        decks=decks,
        commitment_ok=commitment_ok,
        replay_ok=replay_ok,
        result_ok=result_ok,
        moves=len(moves),
        problems=problems,
    )
