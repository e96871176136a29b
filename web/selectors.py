"""Reads the pages need that no app's selectors give yet.

Everything else comes from ``games.selectors``, ``tournaments.selectors`` and the
models' own managers. Each function loads related rows in a fixed number of queries,
never one query per row.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber

from bots.models import Bot
from games.models import Match, Seat
from games.selectors import matches_for_listing
from tournaments.models import RatingChange
from web.end_reasons import end_reason_words


@dataclass(slots=True)
class SeatLine:
    index: int
    name: str
    kind: str  # "bot", "user" or "open"
    lost: bool = False
    forfeited: bool = False


@dataclass(slots=True)
class MatchLine:
    """A match as the archive, the home page and a bot's page list it."""

    id: int
    game: str
    game_title: str
    players: int
    format: str
    status: str
    rated: bool
    ply: int
    seats: list[SeatLine]
    outcome: str
    outcome_kind: str  # "lost", "drawn", "forfeit", "live", "waiting", "aborted"
    created_at: datetime
    finished_at: datetime | None

    @property
    def badge(self) -> str:
        return {"live": "live", "waiting": "open", "aborted": "aborted", "forfeit": "forfeit"}.get(
            self.outcome_kind, ""
        )


def seat_name(seat: Seat | None) -> str:
    if seat is None:
        return "open seat"
    if seat.bot_id:
        return seat.bot.name
    if seat.user_id:
        return seat.user.username
    return "open seat"


def match_outcome(match: Match, names: list[str]) -> tuple[str, str]:
    """Return the match's outcome in words and its kind (for colouring)."""

    def name(index: int | None) -> str:
        return names[index] if index is not None and index < len(names) else f"seat {index}"

    if match.status == Match.Status.WAITING:
        open_seats = sum(1 for n in names if n == "open seat")
        return f"Waiting for {open_seats} player{'s' if open_seats != 1 else ''}", "waiting"
    if match.status == Match.Status.ACTIVE:
        return f"In play, move {match.ply + 1}", "live"
    if match.status == Match.Status.ABORTED:
        reason = f": {match.forfeit_reason}" if match.forfeit_reason else ""
        return f"Aborted{reason}", "aborted"
    if match.forfeit_seat is not None:
        why = end_reason_words(match.end_reason)
        return f"{name(match.forfeit_seat)} forfeited ({why})", "forfeit"
    if match.loser is None:
        why = end_reason_words(match.end_reason) if match.end_reason else ""
        return (f"Drawn: {why}" if why else "Drawn"), "drawn"
    noun = "is the fool" if match.game == Match.Game.DURAK else "lost"
    return f"{name(match.loser)} {noun}", "lost"


def match_lines(matches) -> list[MatchLine]:
    """Return listing lines for matches loaded by ``games.selectors.matches_for_listing``."""
    titles = dict(Match.Game.choices)
    lines = []
    for match in matches:
        seats = {seat.index: seat for seat in match.seats.all()}
        names = [seat_name(seats.get(index)) for index in range(match.players)]
        outcome, kind = match_outcome(match, names)
        finished = match.status == Match.Status.FINISHED
        lines.append(
            MatchLine(
                id=match.pk,
                game=match.game,
                game_title=titles.get(match.game, match.game),
                players=match.players,
                format=match.format,
                status=match.status,
                rated=match.rated,
                ply=match.ply,
                seats=[
                    SeatLine(
                        index=index,
                        name=names[index],
                        kind=(
                            "bot"
                            if seats.get(index) and seats[index].bot_id
                            else "user"
                            if seats.get(index) and seats[index].user_id
                            else "open"
                        ),
                        lost=finished and match.loser == index,
                        forfeited=finished and match.forfeit_seat == index,
                    )
                    for index in range(match.players)
                ],
                outcome=outcome,
                outcome_kind=kind,
                created_at=match.created_at,
                finished_at=match.finished_at,
            )
        )
    return lines


def recent_finished_matches(limit: int = 10) -> list[MatchLine]:
    matches = (
        matches_for_listing()
        .filter(status=Match.Status.FINISHED)
        .order_by("-finished_at", "-id")[:limit]
    )
    return match_lines(matches)


def bot_matches(bot: Bot, limit: int = 15) -> list[MatchLine]:
    """Return the bot's newest matches, unfinished ones included."""
    ids = Seat.objects.filter(bot=bot).values("match_id")
    matches = matches_for_listing().filter(pk__in=ids).order_by("-created_at", "-id")[:limit]
    return match_lines(matches)


def bot_forfeits(bot: Bot, limit: int = 20) -> QuerySet[Seat]:
    """Return the seats in which the bot forfeited a match, newest first, with the match."""
    return (
        Seat.objects.filter(bot=bot, match__forfeit_seat=F("index"))
        .select_related("match")
        .defer("match__snapshot", "match__seed", "match__decks")
        .order_by("-match__finished_at", "-match_id")[:limit]
    )


def bot_forfeit_count(bot: Bot) -> int:
    return Seat.objects.filter(bot=bot, match__forfeit_seat=F("index")).count()


def bot_owners(bot_ids) -> dict[int, str]:
    """Return each bot's owner's username."""
    return dict(Bot.objects.filter(pk__in=list(bot_ids)).values_list("pk", "owner__username"))


def pool_trends(pool: str, bot_ids, points: int = 20) -> dict[int, list[float]]:
    """Return each bot's last ``points`` Elo ratings in the pool, oldest first.

    The first value is the rating before the oldest of those matches, so a bot with n
    rated matches has min(n, points) + 1 values.
    """
    rows = (
        RatingChange.objects.filter(pool=pool, bot_id__in=list(bot_ids))
        .annotate(
            recent=Window(RowNumber(), partition_by=F("bot_id"), order_by=F("sequence").desc())
        )
        .filter(recent__lte=points)
        .order_by("bot_id", "-sequence")
        .values_list("bot_id", "before", "after")
    )
    newest_first: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for bot_id, before, after in rows:
        newest_first[bot_id].append((before, after))
    trends = {}
    for bot_id, changes in newest_first.items():
        changes.reverse()
        trends[bot_id] = [changes[0][0]] + [after for _, after in changes]
    return trends
