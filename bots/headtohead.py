"""Head-to-head records: a bot's results against each opponent.

A head-to-head record counts *pairings*: one seat of the bot and one seat of the
opponent at the same finished match. When each holds one seat (every 2-player match, and
most others) a pairing is a match; a match in which one of them holds two seats counts
once for each pair of seats. The bot's points in a pairing are 1 when the opponent's
seat lost, 0 when its own seat did, 1/2 otherwise (a draw, or a third seat lost), so
that a 3-player match is read as the 2-player results it implies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from statistics import NormalDist

from django.db.models import (
    Case,
    Count,
    F,
    FilteredRelation,
    FloatField,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)

from games.models import Match, Seat

# Forfeit codes (``Match.end_reason`` of a forfeit) by what they say about the bot.
TIMEOUTS = ("timeout",)
ILLEGAL = ("illegal_move", "malformed_response")
RESIGNED = ("resign",)


@dataclass(frozen=True)
class OpponentRecord:
    opponent: str
    game: str
    players: int
    games: int
    wins: int  # the opponent's seat lost
    losses: int  # the bot's seat lost
    draws: int  # nobody lost
    others: int  # a third seat lost
    forfeits: dict[str, int] = field(default_factory=dict)  # the bot's, by kind

    @property
    def points(self) -> float:
        return self.wins + 0.5 * (self.draws + self.others)

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return score_interval(self.points, self.games)


def score_interval(points: float, games: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval of a score ``points / games``: a half point counts as half a
    win, which makes the interval a little wide when there are many draws."""
    if games == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = points / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def _pairings(mine: Mapping[str, object]) -> QuerySet[Seat]:
    """The opponents' seats at finished matches where a seat matching ``mine`` sat.

    ``mine`` gives the bot's seats as lookups on ``Seat`` (``{"bot_id": 7}``); that seat
    is the filtered relation ``mine``, joined once, so a row is one pairing.
    """
    condition = Q(**{f"match__seats__{key}": value for key, value in mine.items()})
    return (
        Seat.objects.annotate(mine=FilteredRelation("match__seats", condition=condition))
        .filter(mine__isnull=False, bot__isnull=False, match__status=Match.Status.FINISHED)
        .exclude(index=F("mine__index"))
    )


def _forfeited(codes: tuple[str, ...] | None) -> Q:
    own = Q(match__forfeit_seat=F("mine__index"))
    if codes is None:
        return own & ~Q(match__end_reason__in=TIMEOUTS + ILLEGAL + RESIGNED)
    return own & Q(match__end_reason__in=codes)


def bot_opponents(
    *, mine: Mapping[str, object], opponent_id: int | None = None
) -> list[OpponentRecord]:
    """Return the record against every opponent, per game shape, in one query.

    ``mine`` selects the bot's seats, e.g. ``{"bot_id": 7}``.
    """
    rows = _pairings(mine)
    if opponent_id is not None:
        rows = rows.filter(bot_id=opponent_id)
    rows = (
        rows.values("bot__name", "match__game", "match__players")
        .annotate(
            games=Count("pk"),
            wins=Count("pk", filter=Q(match__loser=F("index"))),
            losses=Count("pk", filter=Q(match__loser=F("mine__index"))),
            draws=Count("pk", filter=Q(match__loser__isnull=True)),
            timeouts=Count("pk", filter=_forfeited(TIMEOUTS)),
            illegal=Count("pk", filter=_forfeited(ILLEGAL)),
            crashes=Count("pk", filter=_forfeited(None)),
            resigned=Count("pk", filter=_forfeited(RESIGNED)),
        )
        .order_by("bot__name", "match__game", "match__players")
    )
    return [
        OpponentRecord(
            opponent=row["bot__name"],
            game=row["match__game"],
            players=row["match__players"],
            games=row["games"],
            wins=row["wins"],
            losses=row["losses"],
            draws=row["draws"],
            others=row["games"] - row["wins"] - row["losses"] - row["draws"],
            forfeits={
                kind: row[kind] for kind in ("timeouts", "crashes", "illegal", "resigned")
            },
        )
        for row in rows
    ]


@dataclass(frozen=True)
class PairingLine:
    match_id: int
    game: str
    players: int
    finished_at: datetime | None
    seat: int
    opponent_seat: int
    points: float
    end_reason: str
    forfeit: str  # "" or who forfeited: "mine" / "theirs" / "other"


def bot_pairings(*, mine: Mapping[str, object], opponent_id: int) -> list[PairingLine]:
    """Return every pairing with one opponent, oldest first, in one query."""
    rows = (
        _pairings(mine)
        .filter(bot_id=opponent_id)
        .order_by("match__finished_at", "match_id", "mine__index", "index")
        .values_list(
            "match_id", "match__game", "match__players", "match__finished_at", "mine__index",
            "index", "match__loser", "match__end_reason", "match__forfeit_seat",
        )
    )
    lines = []
    for match_id, game, players, finished, seat, other, loser, reason, forfeit in rows:
        points = 1.0 if loser == other else 0.0 if loser == seat else 0.5
        who = (
            "" if forfeit is None
            else "mine" if forfeit == seat
            else "theirs" if forfeit == other
            else "other"
        )  # fmt: skip
        lines.append(
            PairingLine(match_id, game, players, finished, seat, other, points, reason, who)
        )
    return lines



def bot_version_results(*, bot_id: int) -> list[dict]:
    """The bot's rated, decided pairings summed per (its version, opponent, game shape):
    games and points, as the batch fit reads them (a match without a loser is left out),
    in one query."""
    points = Case(
        When(match__loser=F("index"), then=Value(1.0)),
        When(match__loser=F("mine__index"), then=Value(0.0)),
        default=Value(0.5),
        output_field=FloatField(),
    )
    return list(
        _pairings({"bot_id": bot_id})
        .filter(match__rated=True, match__loser__isnull=False)
        .values("mine__bot_version_id", "bot_id", "match__game", "match__players")
        .annotate(games=Count("pk"), points=Sum(points))
        .order_by()
    )
