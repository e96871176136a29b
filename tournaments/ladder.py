"""The ladder: rated matches started among healthy, enabled bots, round the clock.

Beat runs ``ladder_tick``, which seats tables of close-rated bots and sends each match to
a worker (``ladder_match_play``); a bot that keeps forfeiting is paused.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from django.conf import settings
from django.db import IntegrityError, transaction

from bots.driver import match_play_to_end
from bots.models import Bot
from games.models import Match, Seat
from games.seating import SeatHolder
from tournaments import elo
from tournaments.models import LadderMatch, LadderPause, Rating
from tournaments.pools import pool_of
from tournaments.ratings import ratings_apply_match
from tournaments.services import after_commit, matches_abort


def ladder_tick(*, tables_per_pool: int | None = None) -> list[int]:
    """Start rated ladder matches among healthy, enabled bots; return the new match ids.

    For each table shape in ``LADDER_TABLES`` start up to ``LADDER_TABLES_PER_TICK``
    tables while fewer than ``LADDER_MAX_ACTIVE`` ladder matches are unfinished. A table
    starts from the eligible bot with the fewest games in the pool and adds the bots
    whose ratings are closest to its own; no two bots of one owner sit at a table
    (built-in bots, which the arena itself runs, are exempt), and a bot plays one ladder
    match at a time.
    """
    if tables_per_pool is None:
        tables_per_pool = settings.LADDER_TABLES_PER_TICK
    created: list[int] = []
    unfinished = LadderMatch.objects.filter(
        match__status__in=[Match.Status.WAITING, Match.Status.ACTIVE]
    )
    active = unfinished.count()
    # A bot plays one ladder match at a time.
    busy = set(
        Seat.objects.filter(match__ladder_entry__in=unfinished).values_list("bot_id", flat=True)
    )
    for game, players in settings.LADDER_TABLES:
        for _ in range(tables_per_pool):
            if active >= settings.LADDER_MAX_ACTIVE:
                return created
            table = _ladder_table(game, players, busy)
            if table is None:
                break
            created.append(_ladder_match_create(game, players, table))
            busy.update(bot.pk for bot in table)
            active += 1
    return created


def _ladder_table(game: str, players: int, busy: set[int]) -> list[Bot] | None:
    from tournaments.selectors import pool_ratings

    pool = pool_of(game, players)
    bots = [
        bot
        for bot in Bot.objects.filter(enabled=True, healthy=True, ladder_pause=None)
        .exclude(kind=Bot.Kind.CLIENT)
        .order_by("pk")
        if game in (bot.games or []) and bot.pk not in busy
    ]
    if len(bots) < players:
        return None
    ratings = pool_ratings(pool)
    games = dict(Rating.objects.filter(pool=pool).values_list("bot_id", "games"))
    return choose_table(
        [(bot, ratings.get(bot.pk, elo.INITIAL_RATING), games.get(bot.pk, 0)) for bot in bots],
        players,
    )


def choose_table(candidates: Iterable[tuple[Bot, float, int]], players: int) -> list[Bot] | None:
    """Return a table: the bot with fewest games, then the closest-rated compatible bots."""
    candidates = sorted(candidates, key=lambda c: (c[2], c[0].pk))
    if len(candidates) < players:
        return None
    first, rating, _ = candidates[0]
    table = [first]
    for bot, _rating, _ in sorted(candidates[1:], key=lambda c: (abs(c[1] - rating), c[2])):
        if len(table) == players:
            break
        if any(_same_owner(bot, seated) for seated in table):
            continue
        table.append(bot)
    return table if len(table) == players else None


def _same_owner(a: Bot, b: Bot) -> bool:
    if a.kind == Bot.Kind.BUILTIN and b.kind == Bot.Kind.BUILTIN:
        return False
    return a.owner_id == b.owner_id


def _ladder_match_create(game: str, players: int, table: list[Bot]) -> int:
    from games.services import match_create

    order = list(table)
    secrets.SystemRandom().shuffle(order)
    with transaction.atomic():
        match = match_create(
            creator=None,
            game=game,
            players=players,
            deck_size=36 if game == "durak" else 32,
            format="deal",
            seats=[SeatHolder(bot=bot) for bot in order],
            move_time_limit=settings.BOTS_DEFAULT_MOVE_TIME_LIMIT,
            rated=True,
            notify=False,  # play_ladder_match plays it
        )
        LadderMatch.objects.create(match=match, pool=pool_of(game, players))
        match_id = match.pk

        def send() -> None:
            from tournaments.tasks import play_ladder_match

            play_ladder_match.delay(match_id)

        after_commit(send)
    return match_id


def ladder_match_play(*, match_id: int) -> str:
    """Play a ladder match to its end, apply its rating, pause a bot that keeps forfeiting.

    Safe to call again: the match resumes from its move log, the rating applies once.
    Each call counts an attempt; past ``TOURNAMENT_MAX_ATTEMPTS`` the match is aborted
    (a match whose play kills the worker does not come back for ever). Call it outside
    any transaction. Return the match's status.
    """
    with transaction.atomic():
        entry = LadderMatch.objects.select_for_update().filter(match_id=match_id).first()
        if entry is not None:
            entry.attempts += 1
            entry.save(update_fields=["attempts"])
            if entry.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
                matches_abort(match_ids=[match_id], reason="aborted")
    match_play_to_end(match_id=match_id, pool=True)
    return ladder_match_record(match_id=match_id)


def ladder_match_record(*, match_id: int) -> str:
    """Apply a finished ladder match's rating and pause a bot that keeps forfeiting; return
    the match's status. Safe to call again: both happen once. A match still in play (HTTP
    bots on the I/O pool) is recorded when it ends (``tournaments.tasks``)."""
    match = Match.objects.get(pk=match_id)
    if match.status == Match.Status.FINISHED:
        ratings_apply_match(match_id=match_id)
        if match.forfeit_seat is not None:
            ladder_forfeits_check(match_id=match_id)
    return match.status


def ladder_forfeits_check(*, match_id: int) -> LadderPause | None:
    """Pause the bot that forfeited this match if its last rated matches were all forfeits."""
    match = Match.objects.get(pk=match_id)
    seat = Seat.objects.filter(match_id=match_id, index=match.forfeit_seat).first()
    if seat is None or seat.bot_id is None:
        return None
    limit = settings.LADDER_PAUSE_AFTER_FORFEITS
    recent = list(
        Seat.objects.filter(
            bot_id=seat.bot_id, match__rated=True, match__status=Match.Status.FINISHED
        )
        .order_by("-match__finished_at", "-match_id")
        .values_list("index", "match__forfeit_seat")[:limit]
    )
    if len(recent) < limit or any(index != forfeit for index, forfeit in recent):
        return None
    with transaction.atomic():
        try:
            with transaction.atomic():
                return LadderPause.objects.create(
                    bot_id=seat.bot_id, reason=f"forfeited its last {limit} rated matches"
                )
        except IntegrityError:
            return LadderPause.objects.get(bot_id=seat.bot_id)
