"""Reads of matches that several views, services and tasks share; none of them writes.

The state of a match is what the engine gives when it replays the log. ``match_state``
takes it from the cached snapshot when that is current, and otherwise replays the log;
``games.services.match_snapshot_refresh`` is the one that also stores the replay.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, F, Prefetch, QuerySet, Window

from cardkit.engine import DurakSeries, EndReason, load_game, load_state
from cardkit.engine.cards import shuffled_deck
from cardkit.engine.replay import replay_steps
from games.models import Match, Move, Seat
from games.reading import match_reading

# A finished match's end_reason is one of these or a forfeit code ("timeout", "resign"...).
ENGINE_END_REASONS = frozenset(EndReason)


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
    """Return the ids of active matches whose move deadline is before ``now`` and whose
    seat to move is not one the arena plays (those are on the bot driver's clock)."""
    return list(
        Match.objects.filter(status=Match.Status.ACTIVE, deadline_at__lt=now)
        .annotate(arena_turn=F("arena_seats").bitrightshift(F("to_move")).bitand(1))
        .exclude(arena_turn=1)
        .order_by("deadline_at")
        .values_list("pk", flat=True)
    )


def matches_stalled(*, now: datetime) -> QuerySet[Match]:
    """Return the active matches without progress for ``MATCHES_STALLED_AFTER`` seconds
    past their turn's deadline, oldest turn first.

    Every match in play moves or is recovered well within that bound: a person or a
    client bot loses on time at the deadline (the sweep), a dead worker's claim lapses
    and its turn is handed over within seconds. One found here waits on something that
    failed or is overloaded (beat down, a lost message, a queue far behind).
    """
    from django.conf import settings

    cutoff = now - timedelta(seconds=settings.MATCHES_STALLED_AFTER)
    return Match.objects.filter(status=Match.Status.ACTIVE, deadline_at__lt=cutoff).order_by(
        "turn_started_at"
    )


def matches_stall_report() -> dict:
    """The ``matches`` part of the health check: how many matches are stalled, and the
    oldest (``matches_stalled``)."""
    from django.utils import timezone

    now = timezone.now()
    # One query: the oldest stalled match, with how many there are.
    oldest = (
        matches_stalled(now=now)
        .annotate(total=Window(Count("pk")))
        .values_list("pk", "turn_started_at", "total")
        .first()
    )
    return {
        "status": "stalled" if oldest else "ok",
        "stalled": oldest[2] if oldest else 0,
        "oldest_seconds": round((now - oldest[1]).total_seconds(), 1) if oldest else None,
        "oldest_match": oldest[0] if oldest else None,
    }


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


# The engine states this process committed last, by match: (created_at, ply, state, when
# kept). A match's state after its first ``ply`` moves never changes once they are logged,
# so a kept state is right for any row read later at that ply, whoever moved the match in
# between; ``created_at`` tells a match from another given its id after a rollback (SQLite
# reuses ids whose rows were rolled back). The I/O pool records a match's answers one
# after another in the same process: its next answer's move starts from here, not from
# the snapshot's JSON, which was a tenth of its CPU.
# Only states a move may still follow are kept: a state is some 20 kB, and keeping every
# match's last one until 4,096 later ones pushed it out grew each web process by 80 MB
# (about 30 MB an hour under the soak's play; docs/production.md). So a finished match's
# state goes with its last move, a state unused for ``_STATES_IDLE`` seconds goes (a match
# that ended elsewhere: a forfeit on the clock, an abort), and at most ``_STATES_MAX``
# stay, least recently used first out.
_STATES: OrderedDict[int, tuple] = OrderedDict()
_STATES_MAX = 1024
_STATES_IDLE = 600.0
_states_clock = time.monotonic
_STATES_LOCK = threading.Lock()


def _state_remember(entry: tuple) -> None:
    match_id, created_at, ply, state = entry
    if created_at is None:
        return
    now = _states_clock()
    with _STATES_LOCK:
        kept = _STATES.get(match_id)
        if kept is not None and kept[0] == created_at and kept[1] > ply:
            return
        if state.is_over:
            _STATES.pop(match_id, None)
        else:
            _STATES[match_id] = (created_at, ply, state, now)
            _STATES.move_to_end(match_id)
        while _STATES and (
            len(_STATES) > _STATES_MAX or now - next(iter(_STATES.values()))[3] > _STATES_IDLE
        ):
            _STATES.popitem(last=False)


def states_kept() -> int:
    """Return how many engine states this process keeps (tests, memory figures)."""
    with _STATES_LOCK:
        return len(_STATES)


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
    return states_last(_replay(match, moves))


def _replay(match: Match, moves: Iterable[dict]) -> Iterator:
    """Yield the engine state after 0, 1, ... of ``moves``, from the match's first deal.

    The one replay of a log: the state, the replay steps and the verification use it.
    """
    state = match_initial_state(match)
    yield state
    for move in moves:
        state = state.play(move)
        yield state


def states_last(states: Iterator):
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


def seat_name(seat: Seat | None) -> str:
    """Return the name of a seat's player: its bot's, its user's, or "open seat"."""
    if seat is None:
        return "open seat"
    if seat.bot_id:
        return seat.bot.name
    if seat.user_id:
        return seat.user.username
    return "open seat"


def match_seats_named(match: Match) -> tuple[list[str], list[str | None]]:
    """Return, by seat, the players' names (a replay's ``seats``) and the label of the bot
    version that played each (its ``seat_versions``; None for a person), in one query."""
    seats = {seat.index: seat for seat in match.seats.select_related("user", "bot", "bot_version")}
    names = [seat_name(seats.get(index)) for index in range(match.players)]
    versions = [
        seats[index].bot_version.label
        if index in seats and seats[index].bot_version is not None
        else None
        for index in range(match.players)
    ]
    return names, versions


def match_replay_steps(match: Match, *, only: int | None = None) -> list[dict]:
    """Return the steps of the match's replay: the state after each ply, with its move.

    Every state shows all hands once the match is finished, and the public view before.
    The bots' comments are shown once the match may be read whole (``games.reading``:
    finished and unsealed); before, an opponent or a spectator would learn from them what
    a bot holds or plans. With ``only``, the one step after ``only`` moves. The match
    must have started.
    """
    complete = match.status == Match.Status.FINISHED
    moves = match_log(match, up_to_ply=only)
    return replay_steps(
        match_states(match, moves),
        moves,
        complete=complete,
        only=only,
        think_time=move_think_time,
        comments=match_reading(match).complete,
    )
