"""Reads the pages need that no app's selectors give yet.

Everything else comes from ``games.selectors``, ``tournaments.selectors`` and the
models' own managers. Each function loads related rows in a fixed number of queries,
never one query per row.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from bots.models import Bot
from games.models import Match, Seat, VersionRecord
from games.reading import match_forfeit_reason
from games.selectors import matches_for_listing, seat_name
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


def match_outcome(match: Match, names: list[str]) -> tuple[str, str]:
    """Return the match's outcome in words and its kind (for colouring)."""

    def name(index: int | None) -> str:
        return names[index] if index is not None and index < len(names) else f"seat {index}"

    if match.status == Match.Status.WAITING:
        open_seats = sum(1 for n in names if n == "open seat")
        return f"Waiting for {open_seats} player{'s' if open_seats != 1 else ''}", "waiting"
    if match.status == Match.Status.ACTIVE:
        # Moves played, as the replay viewer counts them ("Move 12 of 12").
        moves = f"{match.ply} move{'s' if match.ply != 1 else ''} played"
        played = moves if match.ply else "no move yet"
        return f"In play, {played}", "live"
    if match.status == Match.Status.ABORTED:
        forfeit_reason = match_forfeit_reason(match)
        reason = f": {forfeit_reason}" if forfeit_reason else ""
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
    """Return the bot's newest matches, unfinished ones included.

    Newest by id (the order they were created in): the index on the seats' (bot, match)
    gives them from its end, whatever the length of the bot's history.
    """
    ids = (
        Seat.objects.filter(bot=bot)
        .order_by("-match_id")
        .values_list("match_id", flat=True)
        .distinct()[:limit]
    )
    matches = matches_for_listing().filter(pk__in=ids).order_by("-created_at", "-id")
    return match_lines(matches)


def bot_forfeits(bot: Bot, limit: int = 20) -> QuerySet[Seat]:
    """Return the seats in which the bot forfeited a match, newest first, with the match
    (``Seat.forfeited``, kept as matches finish, and its partial index)."""
    return (
        Seat.objects.filter(bot=bot, forfeited=True)
        .select_related("match")
        .defer("match__snapshot", "match__seed", "match__decks")
        .order_by("-match_id")[:limit]
    )


def bot_forfeit_count(bot: Bot) -> int:
    """Return how many matches the bot forfeited (kept as matches finish: games.records)."""
    return VersionRecord.objects.filter(bot=bot).aggregate(n=Sum("forfeits"))["n"] or 0


def bot_owners(bot_ids) -> dict[int, str]:
    """Return each bot's owner's username."""
    return dict(Bot.objects.filter(pk__in=list(bot_ids)).values_list("pk", "owner__username"))


def pool_trends(pool: str, bot_ids, points: int = 20) -> dict[int, list[float]]:
    """Return each bot's last ``points`` Elo ratings in the pool, oldest first.

    The first value is the rating before the oldest of those matches, so a bot with n
    rated matches has min(n, points) + 1 values. Two queries, each reading ``points``
    entries of the index on (bot, pool, sequence) per bot and nothing of the pool's
    other changes: the sequence of each bot's ``points``-th newest change, then the
    changes from there on.
    """
    bot_ids = list(bot_ids)
    nth = (
        RatingChange.objects.filter(bot_id=OuterRef("pk"), pool=pool)
        .order_by("-sequence")
        .values("sequence")[points - 1 : points]
    )
    oldest = dict(
        Bot.objects.filter(pk__in=bot_ids)
        .annotate(since=Coalesce(Subquery(nth), 0))
        .values_list("pk", "since")
    )
    if not oldest:
        return {}
    recent = Q()
    for bot_id, since in oldest.items():
        recent |= Q(bot_id=bot_id, sequence__gte=since)
    rows = (
        RatingChange.objects.filter(recent, pool=pool)
        .order_by("bot_id", "sequence")
        .values_list("bot_id", "before", "after")
    )
    changes: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for bot_id, before, after in rows:
        changes[bot_id].append((before, after))
    return {
        bot_id: [line[0][0]] + [after for _, after in line] for bot_id, line in changes.items()
    }
