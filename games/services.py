"""Actions on matches: creating, joining, starting, cancelling.

Playing moves is ``games.move_services``, the clock ``games.clock``, ending a match early
(forfeit, resignation, abort) ``games.match_endings``. Each action is a function
named ``<entity>_<action>`` with keyword-only, typed arguments, and runs as one
transaction. A match is its options, its deck commitment and an append-only log of moves;
these modules are the only code that writes them.

Every action that changes a match locks its row first (``SELECT ... FOR UPDATE`` on
PostgreSQL; on SQLite the settings open every transaction with ``BEGIN IMMEDIATE``,
which takes the database's write lock), so two requests never act on one match at once.
After a commit that changes a match, ``games.events`` announces it; ``bots`` hands a turn
of a seat the arena drives to its bot driver.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from cardkit.engine import load_game
from cardkit.engine.cards import check_deck
from cardkit.fairness import (
    deal_seed,
    decks_commitment,
    group_match_commitment,
    new_seed,
    seed_commitment,
)
from games import clock, tasks
from games.errors import (
    AlreadySeated,
    InvalidMatchRequest,
    MatchNotWaiting,
    NotMatchCreator,
    SeatTaken,
    TooManyOpenMatches,
)
from games.events import Change, match_changed_announce
from games.models import Match, Seat
from games.sealing import GroupDeal
from games.seating import SeatedBot, SeatHolder
from games.selectors import (
    match_initial_state,
    match_replayed_state,
    match_snapshot_current,
    match_state,
)

logger = logging.getLogger(__name__)

DEFAULT_MOVE_TIME_LIMIT = 60.0
MAX_MOVE_TIME_LIMIT = 24 * 3600.0

if TYPE_CHECKING:
    from django.contrib.auth.models import User


# --- Creating and joining ---------------------------------------------------------------


def match_create(
    *,
    creator: User | None,
    game: str,
    players: int,
    seats: Sequence[SeatHolder | None],
    deck_size: int | None = None,
    format: str = Match.Format.DEAL,
    move_time_limit: float = DEFAULT_MOVE_TIME_LIMIT,
    rated: bool = False,
    decks: list[list[str]] | None = None,
    dealer: int = 0,
    deal: GroupDeal | None = None,
    notify: bool = True,
    by_arena: bool = False,
) -> Match:
    """Create a match; start it at once if every seat is held.

    ``seats`` has one entry per seat: its ``SeatHolder``, or None for a seat left open for
    ``match_join``. ``decks`` (unrated single deals only: practice) replaces the
    secret seed with a deck the creator chose, top card first, given as a one-deck list.
    ``deal`` deals the match from a deal group's seed instead of a seed of its own: the
    match is sealed until the group unseals (``games.sealing``). With
    ``notify`` false no message is sent when it starts (no turn notice, no deadline
    watch): the caller plays its bots' turns itself (the tournament and ladder tasks).
    ``by_arena``: the arena seats the bots (tournaments, the ladder), not ``creator``,
    who may otherwise seat only bots of their own and built-in ones (``bot_seat_check``).
    Raise InvalidMatchRequest for options, seats or decks that do not make a match.
    """
    try:
        options = {"players": players} | ({"deck_size": deck_size} if deck_size else {})
        engine_game = load_game(game, **options)
    except (ValueError, TypeError) as exc:
        raise InvalidMatchRequest(str(exc)) from None
    if format not in Match.Format.values:
        raise InvalidMatchRequest(f"unknown format {format!r}; formats are deal and fool")
    if format == Match.Format.FOOL and game != Match.Game.DURAK:
        raise InvalidMatchRequest("only Durak is played as a fool series")
    if len(seats) != players:
        raise InvalidMatchRequest(f"give one entry per seat: {players} seats, {len(seats)} given")
    if not isinstance(dealer, int) or not 0 <= dealer < players:
        raise InvalidMatchRequest(f"the dealer must be a seat from 0 to {players - 1}")
    if not 0 < move_time_limit <= MAX_MOVE_TIME_LIMIT:
        raise InvalidMatchRequest(
            f"the move time limit must be above 0 and at most {MAX_MOVE_TIME_LIMIT:g} seconds"
        )
    if decks is not None:
        if deal is not None:
            raise InvalidMatchRequest("a match of a deal group is dealt from its seed, not decks")
        decks = _checked_decks(decks, rated=rated, format=format, deck_size=engine_game.deck_size)
    for holder in seats:
        if holder is not None:
            _check_holder(holder, game)
            if holder.bot is not None and not by_arena:
                bot_seat_check(bot=holder.bot, user=creator)
    if rated:
        held = [holder.key for holder in seats if holder is not None]
        if len(held) != len(set(held)):
            raise InvalidMatchRequest("a rated match needs a different player in every seat")

    match = Match(
        game=game,
        players=players,
        deck_size=engine_game.deck_size,
        format=format,
        rated=rated,
        dealer=dealer,
        move_time_limit=move_time_limit,
        created_by=creator,
        decks=decks,
        # Only the batch runners (tournaments, the ladder, sequential tests) play their
        # matches' turns themselves, without notices.
        batch=not notify,
    )
    if deal is not None:
        if deal.group.abandoned or deal.group.unsealed_at is not None:
            # Its other matches may be read by now: dealing its deck again would show it.
            raise InvalidMatchRequest("the deal group is closed: it deals no more matches")
        match.deal_group = deal.group
        match.deal_number = deal.number
        match.deal_copy = deal.copy
        match.sealed = True
    full = all(holder is not None for holder in seats)
    if full:
        # Dealt before its row is written: one INSERT for a match that starts at once.
        arena_seats = [
            index
            for index, holder in enumerate(seats)
            if holder.bot is not None and holder.bot.played_by_arena
        ]
        _deal(match, timezone.now(), arena_seats)
    with transaction.atomic():
        match.save(force_insert=True)
        Seat.objects.bulk_create(
            Seat(
                match=match,
                index=index,
                user=holder.user if holder else None,
                bot=holder.bot if holder else None,
                bot_version_id=_version_of(holder.bot if holder else None),
            )
            for index, holder in enumerate(seats)
        )
        if full:
            _on_commit_started(match, notify=notify)
    return match


def match_join(
    *, match_id: int, user: User, seat_index: int | None = None, bot: SeatedBot | None = None
) -> Seat:
    """Seat ``user`` (or ``bot``, which the user owns) at an open seat; start a full match.

    Without ``seat_index`` the lowest open seat is taken. Raise MatchNotWaiting once the
    match has started, SeatTaken when the seat (or every seat) is held, AlreadySeated when
    the holder already plays in this rated match.
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.WAITING:
            raise MatchNotWaiting()
        if bot is not None:
            bot_seat_check(bot=bot, user=user)
            holder = SeatHolder(bot=bot)
        else:
            holder = SeatHolder(user=user)
        _check_holder(holder, match.game)
        seats = list(Seat.objects.filter(match=match).order_by("index"))
        if match.rated and holder.key in {
            ("user", s.user_id) if s.user_id else ("bot", s.bot_id)
            for s in seats
            if s.user_id or s.bot_id
        }:
            raise AlreadySeated()
        open_seats = [s for s in seats if s.user_id is None and s.bot_id is None]
        if seat_index is None:
            if not open_seats:
                raise SeatTaken("Every seat of this match is held.")
            seat = open_seats[0]
        else:
            if not 0 <= seat_index < match.players:
                raise InvalidMatchRequest(
                    f"seat {seat_index} is not in this match (seats 0 to {match.players - 1})"
                )
            seat = seats[seat_index]
            if seat not in open_seats:
                raise SeatTaken()
        seat.user = holder.user
        seat.bot = holder.bot
        seat.bot_version_id = _version_of(seat.bot)
        seat.save(update_fields=["user", "bot", "bot_version"])
        if len(open_seats) == 1:
            match_start(match=match)
        else:
            match_changed_announce(match, Change.JOINED)
    return seat


def bot_seat_check(*, bot: SeatedBot, user: User | None) -> None:
    """Raise InvalidMatchRequest unless ``user`` may seat ``bot`` in a match.

    A person seats their own bots (owned, or the client bot whose account they are) and
    the built-in ones, which are everyone's; only the arena (tournaments, the ladder)
    seats anyone's bot. Rated or not: a bot that forfeits loses health, and unhealthy
    bots leave the ladder, so a match someone else made for a bot, with a move time
    limit it cannot meet, would harm its ratings too.
    """
    if bot.seated_by_anyone:
        return
    if user is None or user.pk not in (bot.owner_id, bot.account_id):
        raise InvalidMatchRequest(
            f"you can seat only your own bots and the built-in ones, not {bot.name}"
        )


def match_start(*, match: Match, now: datetime | None = None) -> Match:
    """Deal the first cards of a match whose every seat is held, and open its first turn.

    Should be called inside a transaction holding the match row's lock. Draw the secret
    seed (unless the creator gave decks), publish its commitment, store the snapshot at
    ply 0 and start the clock.
    """
    # ``played_by_arena`` is the bot's own answer (bots.models): games knows no bot kinds.
    arena_seats = [
        seat.index
        for seat in Seat.objects.filter(match=match, bot__isnull=False).select_related("bot")
        if seat.bot.played_by_arena
    ]
    _deal(match, now or timezone.now(), arena_seats)
    match.save(
        update_fields=[
            "seed", "seed_commitment", "status", "started_at", "ply", "to_move", "snapshot",
            "snapshot_ply", "arena_seats", "turn_started_at", "deadline_at",
        ]
    )  # fmt: skip
    _on_commit_started(match, notify=True)
    return match


def _deal(match: Match, now: datetime, arena_seats: Iterable[int]) -> None:
    """Set the match's fields for its start: the seed and its commitment, the snapshot at
    ply 0, the seats the arena plays, the first turn's clock."""
    if match.deal_group_id is not None:
        group_seed = match.deal_group.seed
        match.seed = deal_seed(group_seed, match.deal_number)
        match.seed_commitment = group_match_commitment(
            group_seed, match.deal_number, match.deal_copy
        )
    elif match.decks is None:
        match.seed = new_seed()
        match.seed_commitment = seed_commitment(match.seed)
    else:
        match.seed_commitment = decks_commitment(match.decks)
    state = match_initial_state(match)
    match.status = Match.Status.ACTIVE
    match.started_at = now
    match.ply = 0
    match.to_move = state.to_move
    match.snapshot = state.to_json()
    match.snapshot_ply = 0
    match.arena_seats = sum(1 << index for index in arena_seats)
    clock.turn_open(match, now)


def _on_commit_started(match: Match, *, notify: bool) -> None:
    """Log the start and announce it; with ``notify``, after commit, watch the first deadline
    (and the announcement lets the bot driver take the first turn if the arena plays it).

    Without ``notify`` the caller plays the bots' turns itself (the tournament and ladder
    tasks), and the periodic sweep of overdue matches is the clock's backstop: no
    message is sent. A match whose every seat the arena plays gets no watch either: a
    watch never forfeits such a seat (its bot is on the driver's clock), it only hands
    an overdue turn to a driver again, which the sweep and the resumption of abandoned
    turns do as well; and re-sent every move time limit, the watches of 1,000 such
    matches were the CPU worker's whole load (issue 14).
    """
    match_id, first_deadline = match.pk, match.move_time_limit + clock.DEADLINE_GRACE
    logger.info(
        "match %s started: %s, %s players, %s to move",
        match_id, match.game, match.players, match.to_move, extra={"match_id": match_id},
    )
    match_changed_announce(match, Change.STARTED, arena_to_move=notify and match.arena_to_move)
    if notify and not _arena_plays_every_seat(match):
        transaction.on_commit(lambda: tasks.deadline_watch_send(match_id, first_deadline))


def _arena_plays_every_seat(match: Match) -> bool:
    return match.arena_seats == (1 << match.players) - 1


def match_cancel(*, match_id: int, user: User) -> Match:
    """Abort a match that is still waiting for players; only its creator may."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.created_by_id != user.pk:
            raise NotMatchCreator()
        if match.status != Match.Status.WAITING:
            raise MatchNotWaiting()
        match.status = Match.Status.ABORTED
        match.finished_at = timezone.now()
        match.end_reason = "cancelled"
        match.save(update_fields=["status", "finished_at", "end_reason"])
        match_changed_announce(match, Change.ABORTED)
    return match


def match_quota_check(*, user: User, bots: Sequence[SeatedBot | None] = ()) -> None:
    """Raise TooManyOpenMatches if ``user`` may not open one more match with ``bots`` seated.

    For requests of people and client bots (the API): a user may have
    ``MAX_OPEN_MATCHES_PER_USER`` waiting or active matches that it created, and a bot
    other than a built-in one may sit in ``MAX_OPEN_MATCHES_PER_BOT``. The arena's own
    matches (tournaments, ladder) are not checked. Two requests at once may both pass: the
    cap bounds what one requester can open, it is not exact.
    """
    from django.conf import settings

    open_statuses = [Match.Status.WAITING, Match.Status.ACTIVE]
    limit = settings.MAX_OPEN_MATCHES_PER_USER
    mine = Match.objects.filter(created_by=user, status__in=open_statuses).count()
    if mine >= limit:
        raise TooManyOpenMatches(f"User {user.username}", mine, limit)
    limit = settings.MAX_OPEN_MATCHES_PER_BOT
    for bot in bots:
        if bot is None or not bot.open_matches_capped:
            continue
        seated = (
            Match.objects.filter(seats__bot=bot, status__in=open_statuses).distinct().count()
        )
        if seated >= limit:
            raise TooManyOpenMatches(f"Bot {bot.name}", seated, limit)


# --- The state ------------------------------------------------------------------------


def match_snapshot_refresh(*, match: Match):
    """Return the engine state after the match's ``ply`` moves, and cache it if need be.

    A snapshot behind the match's ply is replaced by the replay of the log, stored only
    if the match is still at that ply, so a slow reader never puts an old snapshot over
    a newer one.
    """
    if match_snapshot_current(match):
        return match_state(match)
    state = match_replayed_state(match)
    snapshot = state.to_json()
    Match.objects.filter(pk=match.pk, ply=match.ply).update(
        snapshot=snapshot, snapshot_ply=match.ply
    )
    match.snapshot, match.snapshot_ply = snapshot, match.ply
    return state


# --- Helpers ----------------------------------------------------------------------------


def _version_of(bot: SeatedBot | None) -> int | None:
    """The version a seat records for ``bot``: the bot's current one (``bots`` keeps it on
    the bot's row, so the bot seated here carries it and no query is needed)."""
    return bot.version_id if bot is not None else None


def _check_holder(holder: SeatHolder, game: str) -> None:
    if not isinstance(holder, SeatHolder):
        raise TypeError(f"a seat is held by a SeatHolder or open (None), not {holder!r}")
    bot = holder.bot
    if bot is not None:
        if not bot.enabled:
            raise InvalidMatchRequest(f"bot {bot.name} is disabled")
        if game not in (bot.games or []):
            raise InvalidMatchRequest(f"bot {bot.name} does not play {game}")


def _checked_decks(decks: Any, *, rated: bool, format: str, deck_size: int) -> list[list[str]]:
    if rated:
        raise InvalidMatchRequest("a rated match is dealt from a secret seed, not from decks")
    if format != Match.Format.DEAL:
        raise InvalidMatchRequest("explicit decks are for single deals (format deal) only")
    if not isinstance(decks, list) or len(decks) != 1 or not isinstance(decks[0], list):
        raise InvalidMatchRequest("decks is a list holding one deck (a list of cards)")
    try:
        check_deck(decks[0], deck_size)
    except ValueError as exc:
        raise InvalidMatchRequest(str(exc)) from None
    return [list(decks[0])]
