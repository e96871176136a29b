"""Head-to-head records: a bot's results against each opponent.

A head-to-head record counts *pairings*: one seat of the bot and one seat of the
opponent at the same finished match. When each holds one seat (every 2-player match, and
most others) a pairing is a match; a match in which one of them holds two seats counts
once for each pair of seats. The bot's points in a pairing are 1 when the opponent's
seat lost, 0 when its own seat did, 1/2 otherwise (a draw, or a third seat lost), so
that a 3-player match is read as the 2-player results it implies.

The records are counted as matches finish and kept (``games.records``); reading them is
a few rows per opponent, however long the bots' history.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from statistics import NormalDist

from django.db.models import F, Q, QuerySet, Sum

from games.models import Match, PairRecord, Seat
from games.records import FORFEIT_KINDS


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


def _records(mine: Mapping[str, object]) -> QuerySet[PairRecord]:
    """The kept records (``games.records``) of the seats ``mine`` selects: a bot's, or one
    of its versions' (``{"bot_id": 7, "bot_version_id": 3}``)."""
    rows = PairRecord.objects.filter(bot_id=mine["bot_id"])
    if "bot_version_id" in mine:
        rows = rows.filter(version_id=mine["bot_version_id"])
    return rows


def bot_opponents(
    *, mine: Mapping[str, object], opponent_id: int | None = None
) -> list[OpponentRecord]:
    """Return the record against every opponent, per game shape, in one query.

    ``mine`` selects the bot's seats, e.g. ``{"bot_id": 7}``. Read from the records kept
    as matches finish, summed over the bot's versions: a few rows per opponent, however
    many matches the bot played.
    """
    rows = _records(mine)
    if opponent_id is not None:
        rows = rows.filter(opponent_id=opponent_id)
    counts = ("games", "wins", "losses", "draws", *FORFEIT_KINDS)
    rows = (
        rows.values("opponent__name", "game", "players")
        .annotate(**{f"sum_{name}": Sum(name) for name in counts})
        .order_by("opponent__name", "game", "players")
    )
    return [
        OpponentRecord(
            opponent=row["opponent__name"],
            game=row["game"],
            players=row["players"],
            games=row["sum_games"],
            wins=row["sum_wins"],
            losses=row["sum_losses"],
            draws=row["sum_draws"],
            others=row["sum_games"] - row["sum_wins"] - row["sum_losses"] - row["sum_draws"],
            forfeits={kind: row[f"sum_{kind}"] for kind in FORFEIT_KINDS},
        )
        for row in rows
        if row["sum_games"]
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


def bot_pairings(
    *, mine: Mapping[str, object], opponent_id: int, limit: int | None = None
) -> list[PairingLine]:
    """Return the pairings with one opponent, oldest first, in one query: every one, or
    the newest ``limit`` (newest by match, which the seats' index on bot and match walks
    from the end, so that a long history is not read to show its end)."""
    # A row is the bot's seat; the opponent's seat at the same finished match is
    # ``match__seats``, joined once (every condition on it is in the one filter() call).
    rows = (
        Seat.objects.filter(
            Q(match__seats__index__lt=F("index")) | Q(match__seats__index__gt=F("index")),
            match__seats__bot_id=opponent_id, match__status=Match.Status.FINISHED, **mine,
        )
        .order_by("-match_id", "-index", "-match__seats__index")
        .values_list(
            "match_id", "match__game", "match__players", "match__finished_at", "index",
            "match__seats__index", "match__loser", "match__end_reason", "match__forfeit_seat",
        )
    )  # fmt: skip
    if limit is not None:
        rows = rows[:limit]
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
    return lines[::-1]


@dataclass(frozen=True)
class PairTotal:
    games: int
    points: float


def bot_pair_total(*, mine: Mapping[str, object], opponent_id: int) -> PairTotal:
    """Return the games and points against one opponent over every game shape, from the
    kept records, in one query."""
    sums = _records(mine).filter(opponent_id=opponent_id).aggregate(
        games=Sum("games"), wins=Sum("wins"), losses=Sum("losses")
    )
    games, wins, losses = (sums[name] or 0 for name in ("games", "wins", "losses"))
    return PairTotal(games=games, points=wins + 0.5 * (games - wins - losses))


def bot_version_results(*, bot_id: int) -> list[dict]:
    """The bot's rated, decided pairings summed per (its version, opponent, game shape):
    games and points, as the batch fit reads them (a match without a loser is left out),
    in one query, from the kept records."""
    rows = (
        PairRecord.objects.filter(bot_id=bot_id, rated_games__gt=0)
        .values("version_id", "opponent_id", "game", "players")
        .annotate(games=Sum("rated_games"), wins=Sum("rated_wins"), losses=Sum("rated_losses"))
        .order_by()
    )
    return [
        {
            "mine__bot_version_id": row["version_id"],
            "bot_id": row["opponent_id"],
            "match__game": row["game"],
            "match__players": row["players"],
            "games": row["games"],
            "points": row["wins"] + 0.5 * (row["games"] - row["wins"] - row["losses"]),
        }
        for row in rows
    ]
