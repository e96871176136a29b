"""Actions on bots: registration, credentials, health, and playing the server-side bots' turns.

Each action is a function named ``<entity>_<action>`` with keyword-only, typed arguments.
An action that calls a bot over HTTP never holds a database transaction open while it
waits: it checks and calls first, then writes in one short transaction.

Who may act is the caller's business (the API lets a bot's owner alone change it; the
admin lets staff); these functions do not check it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bots.models import Bot, BotTurnLease, bot_name_validator
from bots.protocol import BotAnswer, BotCaller, Fault, move_request
from bots.urlsafety import UnsafeBotURL, resolve_safe
from games.engine import GAMES
from games.errors import IdempotencyKeyReused, MatchNotActive, NotYourTurn, StalePly

logger = logging.getLogger(__name__)

# The owner of the built-in bots. A colon is not allowed in the user names people choose
# (Django's username validator), so neither this name nor a client bot's account name
# (``bot:<name>``) can be taken by a person first.
SYSTEM_USERNAME = "arena:builtin"
CLIENT_ACCOUNT_PREFIX = "bot:"
BUILTIN_PLAYERS = ("random", "greedy", "strong")
REGISTRABLE_KINDS = (Bot.Kind.HTTP, Bot.Kind.CLIENT)
# Seconds a bot URL's host may take to resolve when it is registered or changed.
RESOLVE_TIMEOUT = 5.0


# -- registration ---------------------------------------------------------------------


def bot_register(
    *,
    owner,
    name: str,
    kind: str,
    games: Iterable[str],
    url: str = "",
    description: str = "",
) -> tuple[Bot, str]:
    """Register a bot of ``owner`` and return it with its credential, shown this once.

    An ``http`` bot gets a signing secret; its URL is checked (``BOTS_ALLOW_PRIVATE_URLS``)
    and pinged, and the ping's outcome is recorded in ``last_ping_*``: a bot whose ping
    fails is still registered. A ``client`` bot gets a user account of its own
    (``bot:<name>``, no password) and returns that account's API token.

    Raise ValidationError (with a dict of field errors) for a name that is taken or
    malformed, an unknown game or kind, or a URL that is missing, refused or unresolvable.
    """
    kind = _clean_kind(kind)
    errors: dict[str, list[str]] = {}
    name = _collect(errors, "name", _clean_name, name)
    games = _collect(errors, "games", _clean_games, games)
    if kind == Bot.Kind.HTTP:
        url = _collect(errors, "url", _clean_url, url)
    elif url:
        errors["url"] = ["Only HTTP bots have a URL; a client bot calls the arena."]
    if errors:
        raise ValidationError(errors)

    if kind == Bot.Kind.HTTP:
        secret = secrets.token_urlsafe(32)
        answer = _caller().ping(url, secret, settings.BOTS_DEFAULT_MOVE_TIME_LIMIT)
        failed = not answer.ok
        bot = _bot_create(
            owner=owner,
            name=name,
            kind=kind,
            games=games,
            description=description,
            url=url,
            secret=secret,
            last_ping_at=timezone.now(),
            last_ping_ok=answer.ok,
            last_ping_detail=_ping_detail(answer),
            consecutive_failures=int(failed),
            healthy=not (failed and settings.BOTS_UNHEALTHY_AFTER <= 1),
        )
        return bot, secret

    with transaction.atomic():
        account = _client_account_create(name)
        bot = _bot_create(
            owner=owner, name=name, kind=kind, games=games, description=description,
            account=account,
        )
        token = Token.objects.create(user=account)
    return bot, token.key


def _bot_create(**fields) -> Bot:
    try:
        with transaction.atomic():
            return Bot.objects.create(**fields)
    except IntegrityError:
        # Two registrations of one name at once: the unique index decided.
        raise ValidationError({"name": [_NAME_TAKEN]}) from None


def _client_account_create(name: str):
    User = get_user_model()
    username = CLIENT_ACCOUNT_PREFIX + name
    try:
        with transaction.atomic():
            account = User(username=username)
            account.set_unusable_password()
            account.save()
    except IntegrityError:
        raise ValidationError({"name": [_NAME_TAKEN]}) from None
    return account


def bot_credentials_rotate(*, bot_id: int) -> str:
    """Replace the bot's credential and return the new one, shown this once.

    An HTTP bot gets a new signing secret (requests are signed with it from now on); a
    client bot's API token is replaced, so the old token stops working at once. Raise
    ValidationError for a built-in bot, which has none.
    """
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot_id)
        if bot.kind == Bot.Kind.HTTP:
            bot.secret = secrets.token_urlsafe(32)
            bot.save(update_fields=["secret"])
            return bot.secret
        if bot.kind == Bot.Kind.CLIENT:
            Token.objects.filter(user_id=bot.account_id).delete()
            return Token.objects.create(user_id=bot.account_id).key
    raise ValidationError("A built-in bot has no credentials.")


def bot_update(
    *,
    bot_id: int,
    description: str | None = None,
    url: str | None = None,
    games: Iterable[str] | None = None,
) -> Bot:
    """Change what is given of the bot's description, URL and games; return the bot.

    A new URL (HTTP bots only) is checked like at registration and pinged, and the ping
    is recorded. Raise ValidationError for an unknown game, or a URL that is refused or
    given for a bot that is not an HTTP bot.
    """
    bot = Bot.objects.get(pk=bot_id)
    errors: dict[str, list[str]] = {}
    changes: dict[str, object] = {}
    if description is not None:
        changes["description"] = description
    if games is not None:
        changes["games"] = _collect(errors, "games", _clean_games, games)
    if url is not None and url != bot.url:
        if bot.kind != Bot.Kind.HTTP:
            errors["url"] = ["Only HTTP bots have a URL."]
        else:
            changes["url"] = _collect(errors, "url", _clean_url, url)
    if errors:
        raise ValidationError(errors)

    answer = None
    if "url" in changes:
        answer = _caller().ping(changes["url"], bot.secret, settings.BOTS_DEFAULT_MOVE_TIME_LIMIT)
    with transaction.atomic():
        if changes:
            Bot.objects.filter(pk=bot_id).update(**changes)
        if answer is not None:
            _health_record(bot_id=bot_id, ok=answer.ok, ping=answer)
    return Bot.objects.get(pk=bot_id)


def bot_set_enabled(*, bot_id: int, enabled: bool) -> Bot:
    """Enable or disable the bot and return it. A disabled bot is offered no new matches;
    matches it already plays go on."""
    with transaction.atomic():
        Bot.objects.filter(pk=bot_id).update(enabled=enabled)
    return Bot.objects.get(pk=bot_id)


def builtin_bots_ensure() -> list[Bot]:
    """Create the built-in bots `random`, `greedy` and `strong` where missing; return all
    three. Idempotent: existing bots are left as they are."""
    User = get_user_model()
    with transaction.atomic():
        owner = User.objects.filter(username=SYSTEM_USERNAME).first()
        if owner is None:
            owner = User(username=SYSTEM_USERNAME)
            owner.set_unusable_password()
            owner.save()
        bots = []
        for player in BUILTIN_PLAYERS:
            bot, _ = Bot.objects.get_or_create(
                name=player,
                defaults={
                    "owner": owner,
                    "kind": Bot.Kind.BUILTIN,
                    "builtin": player,
                    "games": list(GAMES),
                    "description": f"The built-in {player} player.",
                },
            )
            bots.append(bot)
    return bots


# -- health -----------------------------------------------------------------------------


def bot_ping(*, bot_id: int) -> BotAnswer:
    """Ping an HTTP bot, record the outcome, and return the bot's answer.

    A good answer makes the bot healthy and clears its failures; a bad one counts a
    failure, and ``BOTS_UNHEALTHY_AFTER`` failures in a row mark it unhealthy. Raise
    ValidationError for a bot that is not an HTTP bot.
    """
    bot = Bot.objects.get(pk=bot_id)
    if bot.kind != Bot.Kind.HTTP:
        raise ValidationError("Only HTTP bots are pinged; the arena does not call other bots.")
    answer = _caller().ping(bot.url, bot.secret, settings.BOTS_DEFAULT_MOVE_TIME_LIMIT)
    with transaction.atomic():
        _health_record(bot_id=bot_id, ok=answer.ok, ping=answer)
    return answer


def _health_record(*, bot_id: int, ok: bool, ping: BotAnswer | None = None) -> None:
    """Count a good or a failed answer of the bot; with ``ping``, record it as the last ping.

    The count is updated in the database, so that answers recorded at the same time by
    several workers all count.
    """
    if ok:
        changes = {"consecutive_failures": 0, "healthy": True}
    else:
        changes = {
            "consecutive_failures": F("consecutive_failures") + 1,
            # The right-hand side reads the row as it was before this update.
            "healthy": Case(
                When(
                    consecutive_failures__gte=settings.BOTS_UNHEALTHY_AFTER - 1,
                    then=Value(False),
                ),
                default=F("healthy"),
            ),
        }
    if ping is not None:
        changes.update(
            last_ping_at=timezone.now(), last_ping_ok=ping.ok, last_ping_detail=_ping_detail(ping)
        )
    Bot.objects.filter(pk=bot_id).update(**changes)


def _ping_detail(answer: BotAnswer) -> str:
    if answer.ok:
        return f"pong in {answer.elapsed * 1000:.0f} ms"
    return f"{answer.fault}: {answer.detail}"[:300]


# -- checks -----------------------------------------------------------------------------

_NAME_TAKEN = "A bot with this name already exists."


def _collect(errors: dict[str, list[str]], field: str, clean, value):
    """Return ``clean(value)``, or store its ValidationError's messages under ``field``."""
    try:
        return clean(value)
    except ValidationError as exc:
        errors[field] = exc.messages
        return value


def _clean_kind(kind: str) -> str:
    if kind not in REGISTRABLE_KINDS:
        raise ValidationError(
            {"kind": [f"A bot is registered as one of: {', '.join(REGISTRABLE_KINDS)}."]}
        )
    return kind


def _clean_name(name: str) -> str:
    if not isinstance(name, str):
        raise ValidationError("A bot name is a string.")
    bot_name_validator(name)
    if Bot.objects.filter(name__iexact=name).exists():
        raise ValidationError(_NAME_TAKEN)
    return name


def _clean_games(games: Iterable[str]) -> list[str]:
    if isinstance(games, str) or not isinstance(games, Iterable):
        raise ValidationError("Give a list of games.")
    games = list(dict.fromkeys(games))
    if not games:
        raise ValidationError(f"Give at least one game: {', '.join(GAMES)}.")
    unknown = [game for game in games if game not in GAMES]
    if unknown:
        raise ValidationError(
            f"Unknown game(s): {', '.join(map(str, unknown))}; the games are "
            f"{', '.join(GAMES)}."
        )
    return games


def _clean_url(url: str) -> str:
    if not url:
        raise ValidationError("An HTTP bot needs the URL the arena calls.")
    if len(url) > Bot._meta.get_field("url").max_length:
        raise ValidationError("The URL is too long.")
    try:
        resolve_safe(url, settings.BOTS_ALLOW_PRIVATE_URLS, timeout=RESOLVE_TIMEOUT)
    except UnsafeBotURL as exc:
        raise ValidationError(exc.reason) from None
    except (OSError, TimeoutError) as exc:
        raise ValidationError(f"The URL's host does not resolve: {exc}") from None
    return url


# -- the bot caller ---------------------------------------------------------------------

# One caller per process and per value of the setting, so that connections to bots are
# kept alive between moves. Built on first use: settings are not read at import time.
_CALLERS: dict[bool, BotCaller] = {}


def _caller() -> BotCaller:
    allow_private = bool(settings.BOTS_ALLOW_PRIVATE_URLS)
    caller = _CALLERS.get(allow_private)
    if caller is None:
        caller = _CALLERS.setdefault(allow_private, BotCaller(allow_private=allow_private))
    return caller


# -- the bot-turn driver ----------------------------------------------------------------

# Seconds a claim on a match outlasts the time its bot to move may take: enough to
# record the move or the forfeit after the call. A built-in bot decides in well under a
# second.
LEASE_GRACE = 10.0
BUILTIN_LEASE = 30.0
# Below this many seconds before the match's deadline an HTTP bot is not called: the
# call could not end in time, and the match's deadline check forfeits the seat.
MIN_CALL_TIME = 0.01

# The matches this thread is playing right now. A move's commit may start the driver
# again for the same match (``games.tasks.match_turn_started`` run eagerly); that inner
# call returns at once and the loop already running plays on, so a long match does not
# become deep recursion.
_PLAYING: ContextVar[frozenset[int]] = ContextVar("bot_turns_playing", default=frozenset())


@dataclass(frozen=True, slots=True)
class _BotTurn:
    """A server-side bot's turn: everything needed to ask it for its move."""

    match_id: int
    game: str
    options: dict
    seed: str
    seat: int
    ply: int
    bot: Bot
    # The match's state before this move.
    state: Any
    # When the match stops waiting for this move (None: the match keeps no clock).
    deadline_at: datetime | None
    move_time_limit: float

    def time_left(self) -> float:
        """Return the seconds the bot has from now: up to the match's deadline."""
        if self.deadline_at is None:
            return self.move_time_limit
        left = (self.deadline_at - timezone.now()).total_seconds()
        return min(self.move_time_limit, left)


def bot_turns_play(*, match_id: int, max_moves: int | None = None) -> int:
    """Play the match's moves for its built-in and HTTP bots, one after another.

    Stop when the match is not active, when a person or a client bot is to move, after
    ``max_moves`` moves, or when a bot forfeits; return the number of moves played. A
    built-in bot chooses with a generator seeded from the match's seed, seat and ply, so
    an archived match replays exactly. An HTTP bot is called with the time left until
    the match's move deadline; a fault (timeout, bad answer, illegal move, ...) forfeits
    the match for its seat with the fault as the reason and counts against the bot's
    health, and a good move clears the bot's failures.

    Built-in players' moves in a row are decided in memory and appended together, up to
    ``BOTS_BUILTIN_MOVES_PER_WRITE`` at a time (``games.services.match_moves_append``):
    the log still grows during a long match, so a match whose worker died resumes from
    it and spectators see it move.

    The match is claimed (``BotTurnLease``) before the first bot is asked and kept until
    this call stops. A call that finds the match claimed by another one still playing,
    or its turn already played, stops at once and returns 0: so return does not always
    mean that no bot is to move, but that another call is playing those moves.

    Call it outside any transaction: it waits on bots over HTTP, and each write is its
    own transaction.
    """
    playing = _PLAYING.get()
    if match_id in playing:
        return 0
    token = _PLAYING.set(playing | {match_id})
    driver = _Driver(holder=secrets.token_hex(16))
    played = 0
    try:
        while max_moves is None or played < max_moves:
            limit = None if max_moves is None else max_moves - played
            moved = _bot_turns_step(match_id, driver, limit=limit)
            if not moved:
                break
            played += moved
    finally:
        _PLAYING.reset(token)
        if driver.claimed:
            _lease_release(match_id, driver.holder)
    return played


@dataclass(slots=True)
class _Driver:
    """One call of ``bot_turns_play``: its claim's id, whether it claimed the match, and
    the bots at the match's seats (fixed once a match has started)."""

    holder: str
    claimed: bool = False
    seat_bots: dict[int, Bot | None] | None = None
    # When this driver's claim lapses, by its own clock (time.monotonic()).
    claimed_until: float = 0.0


def _bot_turns_step(match_id: int, driver: _Driver, *, limit: int | None) -> int:
    """Play the next bot move of the match, or its built-in players' moves in a row (at
    most ``limit``); return how many moves were made."""
    turn = _bot_turn_load(match_id, driver)
    if turn is None:
        return 0
    if turn.bot.kind == Bot.Kind.BUILTIN:
        if not _lease_claim(
            turn, driver, hold_for=BUILTIN_LEASE, keep_if_left=BUILTIN_LEASE / 2
        ):
            return 0
        return _builtin_moves_play(turn, driver, limit=limit)
    return int(_http_bot_turn_play(turn, driver))


def _http_bot_turn_play(turn: _BotTurn, driver: _Driver) -> bool:
    """Ask the HTTP bot to move and play its answer; return whether a move was made."""
    from games import errors as match_errors
    from games.services import match_move_submit

    time_limit = turn.time_left()
    if time_limit < MIN_CALL_TIME:
        # Too late to ask: the match's deadline check forfeits the seat on time.
        _deadline_enforce(turn)
        return False
    if not _lease_claim(turn, driver, hold_for=time_limit + LEASE_GRACE):
        return False
    answer = _http_bot_ask(turn, time_limit)
    if not answer.ok:
        _bot_forfeit(turn, code=str(answer.fault), detail=answer.detail)
        return False
    try:
        match_move_submit(
            match_id=turn.match_id,
            seat=turn.seat,
            ply=turn.ply,
            move=answer.move,
            idempotency_key=_bot_move_key(turn.bot, turn.ply),
            notify=False,
        )
    except match_errors.IllegalMoveError as exc:
        _bot_forfeit(turn, code=Fault.ILLEGAL_MOVE, detail=str(exc))
        return False
    except _TURN_GONE:
        return False
    if turn.bot.consecutive_failures or not turn.bot.healthy:
        with transaction.atomic():
            _health_record(bot_id=turn.bot.pk, ok=True)
    return True


def _builtin_moves_play(turn: _BotTurn, driver: _Driver, *, limit: int | None) -> int:
    """Play the built-in players' moves from ``turn`` on while a built-in bot is to move (at
    most ``limit``), appending them ``BOTS_BUILTIN_MOVES_PER_WRITE`` at a time; return
    how many were played.

    The state stays in memory from one write to the next: only this driver, holding the
    match's claim, moves in it meanwhile (a person cannot: no person's seat is to move).
    """
    from games.services import match_moves_append

    played = 0
    per_write = settings.BOTS_BUILTIN_MOVES_PER_WRITE
    while True:
        batch = per_write if limit is None else min(per_write, limit - played)
        moves, after, refused = _builtin_moves_decide(turn, driver, batch)
        if moves:
            try:
                match_moves_append(match_id=turn.match_id, ply=turn.ply, moves=moves)
            except _TURN_GONE:
                return played
            played += len(moves)
        if refused is not None:
            _bot_forfeit(refused[0], code=Fault.ILLEGAL_MOVE, detail=str(refused[1]))
            return played
        if after.is_over or (limit is not None and played >= limit):
            return played
        bot = driver.seat_bots.get(after.to_move)
        if bot is None or bot.kind != Bot.Kind.BUILTIN:
            return played
        turn = replace(turn, seat=after.to_move, ply=turn.ply + len(moves), bot=bot, state=after)
        if not _lease_claim(turn, driver, hold_for=BUILTIN_LEASE, keep_if_left=BUILTIN_LEASE / 2):
            return played


def _builtin_moves_decide(turn: _BotTurn, driver: _Driver, count: int):
    """Decide up to ``count`` built-in moves in a row from ``turn``, in memory.

    Return the moves, the state after them, and (the turn, the engine's error) if a
    built-in player chose a move the engine refused, else None.
    """
    from bots.builtin import decision_rng, get_player
    from games.engine import IllegalMove
    from games.services import ArenaMove

    state, ply, bot = turn.state, turn.ply, turn.bot
    moves: list[ArenaMove] = []
    while True:
        seat = state.to_move
        player = get_player(bot.builtin, turn.game)
        # The ply counts the match's moves (across the deals of a series), so every
        # decision of a match has a generator of its own.
        move = player.choose(
            state.view(seat), state.legal_moves(), decision_rng(turn.seed, seat, ply)
        )
        try:
            after = state.play(move)
        except IllegalMove as exc:
            # A bug in a built-in player: its seat forfeits, as an HTTP bot's would.
            refused = replace(turn, seat=seat, ply=ply, bot=bot, state=state)
            return moves, state, (refused, exc)
        state = after
        moves.append(ArenaMove(seat, move, timezone.now(), _bot_move_key(bot, ply)))
        ply += 1
        if state.is_over or len(moves) >= count:
            return moves, state, None
        bot = driver.seat_bots.get(state.to_move)
        if bot is None or bot.kind != Bot.Kind.BUILTIN:
            return moves, state, None


# What a move meets when another worker played the turn, or the match ended meanwhile
# (on time, say): the driver stops without a fault.
_TURN_GONE = (StalePly, NotYourTurn, MatchNotActive, IdempotencyKeyReused)


def _bot_move_key(bot: Bot, ply: int) -> str:
    return f"bot:{bot.pk}:{ply}"


def _bot_turn_load(match_id: int, driver: _Driver) -> _BotTurn | None:
    """Return the turn of the bot to move, or None when no server-side bot is to move."""
    from games.models import Match, Seat
    from games.rows import match_row
    from games.selectors import match_state

    match = match_row(match_id)
    if match is None or match.status != Match.Status.ACTIVE:
        return None
    if driver.seat_bots is None:
        driver.seat_bots = {
            seat.index: seat.bot
            for seat in Seat.objects.select_related("bot").filter(match_id=match_id)
        }
    bot = driver.seat_bots.get(match.to_move)
    if bot is None or bot.kind == Bot.Kind.CLIENT:
        return None
    state = match_state(match)
    if state.is_over or state.to_move != match.to_move:
        return None
    options = {"players": match.players, "deck_size": match.deck_size}
    if match.game == "durak":
        options["format"] = match.format
    return _BotTurn(
        match_id=match.pk,
        game=match.game,
        options=options,
        # Matches dealt from explicit decks have no seed; their decisions are seeded by
        # the match's id, which is as fixed.
        seed=match.seed or f"match-{match.pk}",
        seat=match.to_move,
        ply=match.ply,
        bot=bot,
        state=state,
        deadline_at=match.deadline_at,
        move_time_limit=match.move_time_limit or settings.BOTS_DEFAULT_MOVE_TIME_LIMIT,
    )


def _http_bot_ask(turn: _BotTurn, time_limit: float) -> BotAnswer:
    payload = move_request(
        state=turn.state,
        match_id=turn.match_id,
        game=turn.game,
        options=turn.options,
        time_limit=time_limit,
        now=timezone.now(),
    )
    return _caller().request_move(turn.bot.url, turn.bot.secret, payload, time_limit)


def _lease_claim(
    turn: _BotTurn, driver: _Driver, *, hold_for: float, keep_if_left: float | None = None
) -> bool:
    """Claim (or keep) the match for ``driver`` for ``hold_for`` seconds; return False
    when another driver holds it.

    A claim of the driver's own that lasts ``keep_if_left`` seconds more is kept as it
    is: a driver playing built-in moves in quick succession need not write at each batch.
    """
    left = driver.claimed_until - time.monotonic()
    if driver.claimed and keep_if_left is not None and left > keep_if_left:
        return True
    started = time.monotonic()
    now = timezone.now()
    expires_at = now + timedelta(seconds=hold_for)
    holder = driver.holder
    with transaction.atomic():
        taken = (
            BotTurnLease.objects.filter(match_id=turn.match_id)
            .filter(Q(holder=holder) | Q(expires_at__lte=now))
            .update(holder=holder, ply=turn.ply, expires_at=expires_at)
        )
        if not taken:
            if BotTurnLease.objects.filter(match_id=turn.match_id).exists():
                return False
            try:
                with transaction.atomic():
                    BotTurnLease.objects.create(
                        match_id=turn.match_id, holder=holder, ply=turn.ply,
                        expires_at=expires_at,
                    )
            except IntegrityError:
                return False
    driver.claimed = True
    driver.claimed_until = started + hold_for
    return True


def _lease_release(match_id: int, holder: str) -> None:
    """Let go of the match, if ``holder`` holds it, so the next driver need not wait."""
    with transaction.atomic():
        BotTurnLease.objects.filter(match_id=match_id, holder=holder).delete()


def _deadline_enforce(turn: _BotTurn) -> None:
    """Forfeit on time a turn whose deadline passed before the bot could be asked.

    Not counted against the bot's health: the arena, not the bot, was late.
    """
    from games.services import match_deadline_enforce

    match_deadline_enforce(match_id=turn.match_id, ply=turn.ply, by_driver=True)


def _bot_forfeit(turn: _BotTurn, *, code: str, detail: str) -> None:
    """Forfeit the match for the bot's seat, and count the failure against the bot."""
    from games.services import match_forfeit

    logger.info(
        "bot %s forfeits match %s at ply %s: %s (%s)",
        turn.bot.name, turn.match_id, turn.ply, code, detail,
        extra={"match_id": turn.match_id},
    )
    match = match_forfeit(
        match_id=turn.match_id, seat=turn.seat, code=code, detail=detail, expected_ply=turn.ply
    )
    # The match may have ended otherwise meanwhile; then this fault cost the bot nothing.
    if match.forfeit_seat == turn.seat and match.ply == turn.ply:
        with transaction.atomic():
            _health_record(bot_id=turn.bot.pk, ok=False)
