"""Challenges: asking another owner's bot for an unrated match, with its owner's consent.

Only its owner or the arena seats a bot (``games.services.bot_seat_check``); a challenge
is how anyone else asks. The challenger names the bot and the table (game, players, time
limit, every seat: themselves, their own bots, the built-in ones, and the challenged bot
once). The bot's policy answers at once (``accept_all``; ``builtin_only`` accepts a
table whose other seats are all built-in bots and declines any other), or the challenge
waits (``manual``) until the bot's owner, or the bot itself with its own token (as a
Lichess bot answers on its event stream), accepts or declines it; the challenger may
cancel it while it waits, and one that waits longer than ``CHALLENGES_EXPIRE_AFTER``
expires (``challenges_expire``). Accepting creates the match, unrated, which is then played as
any other: the arena drives its HTTP and built-in bots, a client bot plays on its account
stream. Every change of a challenge is announced on the account streams of the
challenger, the bot's owner and a client bot's account, as a ``challenge`` event
(``games.account_notices``).

Each action is a function named ``challenge_<action>``, keyword-only and typed, one
transaction; the notices go after the commit. They check who may act: the consent is
the point of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bots.challenge_selectors import (
    NOTICE,
    challenge_cutoff,
    challenges_waiting,
)
from bots.models import Bot, Challenge, ChallengePolicy
from cardkit.engine import load_game
from games.account_notices import account_notice_publish
from games.errors import InvalidMatchRequest, MatchError
from games.seating import SeatHolder
from games.services import (
    MAX_MOVE_TIME_LIMIT,
    bot_seat_check,
    match_create,
    match_quota_check,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ChallengeError(MatchError):
    """An action on a challenge that its state or the requester does not allow."""

    status = 409


class ChallengeNotPending(ChallengeError):
    code = "challenge_not_pending"

    def __init__(self, challenge: Challenge) -> None:
        super().__init__(f"The challenge is {challenge.status}: it is no longer waiting.")
        self.current = challenge.status

    @property
    def detail(self) -> dict:
        return {"status": self.current}


class NotChallengeAnswerer(ChallengeError):
    status = 403
    code = "not_bot_owner"
    message = "Only the challenged bot's owner, or the bot itself, may answer a challenge."


class NotChallenger(ChallengeError):
    status = 403
    code = "not_challenger"
    message = "Only the challenger may cancel a challenge."


class TooManyChallenges(ChallengeError):
    code = "too_many_challenges"

    def __init__(self, pending: int, limit: int) -> None:
        super().__init__(
            f"You have {pending} challenges waiting for an answer, the most allowed ({limit}); "
            "cancel some or wait for their answers."
        )
        self.pending, self.limit = pending, limit

    @property
    def detail(self) -> dict:
        return {"pending": self.pending, "limit": self.limit}


# --- Actions ------------------------------------------------------------------------------


def challenge_create(
    *,
    challenger: User,
    bot: Bot,
    game: str,
    players: int,
    seats: Sequence[SeatHolder],
    move_time_limit: float,
    deck_size: int | None = None,
) -> Challenge:
    """Ask ``bot`` for an unrated match seated as ``seats``; return the challenge, which
    the bot's policy may have answered already (accepted: its match exists).

    Raise InvalidMatchRequest for a table that is not a match, a bot the challenger may
    seat without asking (their own, a built-in one), or a seat they may not fill;
    TooManyChallenges past ``CHALLENGES_MAX_PENDING`` waiting; and, when the policy
    accepts at once, TooManyOpenMatches as creating a match would.
    """
    deck_size = _check_table(challenger, bot, game, players, seats, move_time_limit, deck_size)
    with transaction.atomic():
        pending = challenges_waiting().filter(challenger=challenger).count()
        if pending >= settings.CHALLENGES_MAX_PENDING:
            raise TooManyChallenges(pending, settings.CHALLENGES_MAX_PENDING)
        challenge = Challenge.objects.create(
            challenger=challenger,
            bot=bot,
            game=game,
            players=players,
            deck_size=deck_size,
            move_time_limit=move_time_limit,
            seats=[
                {"bot": h.bot.pk} if h.bot is not None else {"user": h.user.pk} for h in seats
            ],
        )
        challenge.bots.set({h.bot.pk for h in seats if h.bot is not None})
        answer, reason = _policy_answer(bot, seats)
        if answer == Challenge.Status.ACCEPTED:
            _accept(challenge, answered_by=None)
        elif answer == Challenge.Status.DECLINED:
            _answer(challenge, Challenge.Status.DECLINED, answered_by=None, reason=reason)
        _announce(challenge)
    return challenge


def challenge_accept(*, challenge_id: int, user: User) -> Challenge:
    """Accept a waiting challenge for its bot and create its match; return the challenge.

    ``user`` is the bot's owner, or the client bot's own account. Raise
    NotChallengeAnswerer for anyone else, ChallengeNotPending once it was answered or
    cancelled or expired (an answer too late expires it), InvalidMatchRequest or
    TooManyOpenMatches when its match cannot be created now (a bot disabled since, too
    many open matches): it then stays waiting.
    """
    challenges_expire(ids=[challenge_id])
    with transaction.atomic():
        challenge = _locked(challenge_id)
        _check_answerer(challenge, user)
        _accept(challenge, answered_by=user)
        _announce(challenge)
    return challenge


def challenge_decline(*, challenge_id: int, user: User, reason: str = "") -> Challenge:
    """Decline a waiting challenge for its bot; return it. Raise as ``challenge_accept``."""
    challenges_expire(ids=[challenge_id])
    with transaction.atomic():
        challenge = _locked(challenge_id)
        _check_answerer(challenge, user)
        _answer(challenge, Challenge.Status.DECLINED, answered_by=user, reason=reason)
        _announce(challenge)
    return challenge


def challenge_cancel(*, challenge_id: int, user: User) -> Challenge:
    """Withdraw a waiting challenge; only its challenger may. Return it.

    Raise NotChallenger for anyone else, ChallengeNotPending once it was answered."""
    challenges_expire(ids=[challenge_id])
    with transaction.atomic():
        challenge = _locked(challenge_id)
        if challenge.challenger_id != user.pk:
            raise NotChallenger()
        _answer(challenge, Challenge.Status.CANCELLED, answered_by=user)
        _announce(challenge)
    return challenge


def challenges_expire(
    *, ids: Iterable[int] | None = None, now: datetime | None = None
) -> list[int]:
    """Expire every challenge (of ``ids``, when given) that has waited for an answer
    longer than ``CHALLENGES_EXPIRE_AFTER``; return their ids.

    Beat runs it every 30 s (``bots.tasks.expire_challenges``, bots migration 0014); the
    answers call it on their challenge first, so an answer that comes too late finds it
    expired, whether the sweep ran or not. Rows another transaction holds are left for
    the next sweep.
    """
    now = now or timezone.now()
    overdue = Challenge.objects.filter(
        status=Challenge.Status.PENDING, created_at__lt=challenge_cutoff(now)
    )
    if ids is not None:
        overdue = overdue.filter(pk__in=list(ids))
    waited = timedelta(seconds=settings.CHALLENGES_EXPIRE_AFTER)
    with transaction.atomic():
        rows = list(
            overdue.select_for_update(skip_locked=True, of=("self",)).select_related("bot")
        )
        for challenge in rows:
            _answer(
                challenge, Challenge.Status.EXPIRED, answered_by=None,
                reason=f"No answer within {_duration(waited)}.", now=now,
            )  # fmt: skip
            _announce(challenge)
    return [challenge.pk for challenge in rows]


def _duration(waited: timedelta) -> str:
    seconds = waited.total_seconds()
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' * (minutes != 1)}"
    return f"{seconds:g} seconds"


def _locked(challenge_id: int) -> Challenge:
    return Challenge.objects.select_for_update(of=("self",)).select_related("bot").get(
        pk=challenge_id
    )


def _check_answerer(challenge: Challenge, user: User) -> None:
    if user.pk not in (challenge.bot.owner_id, challenge.bot.account_id):
        raise NotChallengeAnswerer()


def _answer(
    challenge: Challenge,
    status: str,
    *,
    answered_by: User | None,
    reason: str = "",
    now: datetime | None = None,
) -> None:
    """Record the answer of a waiting challenge. Should be called holding its row's lock
    (or on a row this transaction created)."""
    if challenge.status != Challenge.Status.PENDING:
        raise ChallengeNotPending(challenge)
    challenge.status = status
    challenge.answered_by = answered_by
    challenge.answered_at = now or timezone.now()
    challenge.reason = reason[:300]
    challenge.save(update_fields=["status", "answered_by", "answered_at", "reason", "match"])


def _accept(challenge: Challenge, *, answered_by: User | None) -> None:
    """Create the challenge's match and record it accepted.

    The challenged bot's seat is its owner's consent (this answer, or the policy they
    set); every other seat is checked again as the challenger's, since bots may have
    changed hands or been disabled while the challenge waited. So the match is created
    with ``by_arena``: ``games`` checks no seat of it against its creator.
    """
    if challenge.status != Challenge.Status.PENDING:
        raise ChallengeNotPending(challenge)
    holders = _holders(challenge)
    for holder in holders:
        if holder.bot is not None and holder.bot.pk != challenge.bot_id:
            bot_seat_check(bot=holder.bot, user=challenge.challenger)
    match_quota_check(
        user=challenge.challenger, bots=[h.bot for h in holders if h.bot is not None]
    )
    challenge.match = match_create(
        creator=challenge.challenger,
        game=challenge.game,
        players=challenge.players,
        deck_size=challenge.deck_size,
        seats=holders,
        move_time_limit=challenge.move_time_limit,
        rated=False,
        by_arena=True,
    )
    _answer(challenge, Challenge.Status.ACCEPTED, answered_by=answered_by)


def _holders(challenge: Challenge) -> list[SeatHolder]:
    bots = Bot.objects.in_bulk([seat["bot"] for seat in challenge.seats if "bot" in seat])
    holders = []
    for seat in challenge.seats:
        if "bot" in seat:
            holders.append(SeatHolder(bot=bots[seat["bot"]]))
        else:
            holders.append(SeatHolder(user=challenge.challenger))
    return holders


def _announce(challenge: Challenge) -> None:
    account_notice_publish(
        kind=NOTICE,
        notice_id=challenge.pk,
        user_ids=[challenge.challenger_id, challenge.bot.owner_id, challenge.bot.account_id],
    )


def _policy_answer(bot: Bot, seats: Sequence[SeatHolder]) -> tuple[str, str]:
    """Return the answer the bot's policy gives at once (pending: none) and why."""
    if bot.challenge_policy == ChallengePolicy.ACCEPT_ALL:
        return Challenge.Status.ACCEPTED, ""
    if bot.challenge_policy == ChallengePolicy.BUILTIN_ONLY:
        others = [h for h in seats if h.bot is None or h.bot.pk != bot.pk]
        if all(h.bot is not None and h.bot.kind == Bot.Kind.BUILTIN for h in others):
            return Challenge.Status.ACCEPTED, ""
        return Challenge.Status.DECLINED, f"{bot.name} accepts only tables of built-in bots."
    return Challenge.Status.PENDING, ""


def _check_table(
    challenger: User,
    bot: Bot,
    game: str,
    players: int,
    seats: Sequence[SeatHolder],
    move_time_limit: float,
    deck_size: int | None,
) -> int:
    """Raise InvalidMatchRequest unless the challenge describes a match the challenger may
    ask for; return its deck size."""
    if bot.kind == Bot.Kind.BUILTIN:
        raise InvalidMatchRequest(
            f"{bot.name} is a built-in bot, which anyone may seat: create a match with it."
        )
    if challenger.pk in (bot.owner_id, bot.account_id):
        raise InvalidMatchRequest(f"{bot.name} is your own bot: create a match with it.")
    try:
        options = {"players": players} | ({"deck_size": deck_size} if deck_size else {})
        engine_game = load_game(game, **options)
    except (ValueError, TypeError) as exc:
        raise InvalidMatchRequest(str(exc)) from None
    if not 0 < move_time_limit <= MAX_MOVE_TIME_LIMIT:
        raise InvalidMatchRequest(
            f"the move time limit must be above 0 and at most {MAX_MOVE_TIME_LIMIT:g} seconds"
        )
    if len(seats) != players:
        raise InvalidMatchRequest(f"give one entry per seat: {players} seats, {len(seats)} given")
    if sum(1 for h in seats if h.bot is not None and h.bot.pk == bot.pk) != 1:
        raise InvalidMatchRequest(f"seat {bot.name}, the bot challenged, exactly once")
    for holder in seats:
        if holder.user is not None and holder.user.pk != challenger.pk:
            raise InvalidMatchRequest("You can seat yourself or bots; no one else.")
        seated = holder.bot
        if seated is None:
            continue
        if not seated.enabled:
            raise InvalidMatchRequest(f"bot {seated.name} is disabled")
        if game not in (seated.games or []):
            raise InvalidMatchRequest(f"bot {seated.name} does not play {game}")
        if seated.pk != bot.pk:
            bot_seat_check(bot=seated, user=challenger)
    return engine_game.deck_size
