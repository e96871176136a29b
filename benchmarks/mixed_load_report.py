"""The figures of ``benchmarks.mixed_load`` (and its test), read from the arena's database:
run in a process set up on the arena's settings."""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import UTC, datetime

KINDS = ("tournament", "ladder", "interactive", "sequential")


def load_report(*, since: float) -> dict:
    """Per kind of work, the matches created since ``since`` (a Unix time): how they ended,
    the wait from "ready" to the first move, and the wait of each arena turn (p50/p95/max,
    seconds); the tournaments' matches by status."""
    from games.models import Match, Move, Seat
    from tournaments.models import LadderMatch, SequentialPair, Tournament, TournamentMatch

    start = datetime.fromtimestamp(since, UTC)
    matches = list(
        Match.objects.filter(created_at__gte=start).values(
            "pk", "status", "forfeit_seat", "forfeit_reason", "created_at", "started_at",
            "arena_seats", "end_reason", "ply", "to_move",
        )
    )  # fmt: skip
    ids = [match["pk"] for match in matches]
    # Who forfeited: the bot's name, or "person".
    holders = {
        (match_id, index): name or "person"
        for match_id, index, name in Seat.objects.filter(
            match_id__in=[m["pk"] for m in matches if m["forfeit_seat"] is not None]
        ).values_list("match_id", "index", "bot__name")
    }
    for match in matches:
        match["forfeited_by"] = holders.get((match["pk"], match["forfeit_seat"]))
    ready, sent = _tournament_ready(TournamentMatch, ids)
    ladder = set(LadderMatch.objects.filter(match_id__in=ids).values_list("match_id", flat=True))
    sequential = set()
    for first, second in SequentialPair.objects.values_list("first_id", "second_id"):
        sequential |= {first, second}
    moves = defaultdict(list)
    for row in (
        Move.objects.filter(match_id__in=ids)
        .order_by("match_id", "ply")
        .values_list("match_id", "ply", "seat", "received_at", "sent_at")
    ):
        moves[row[0]].append(row[1:])
    figures = {kind: _Kind() for kind in KINDS}
    for match in matches:
        pk = match["pk"]
        kind = (
            "tournament" if pk in ready else "ladder" if pk in ladder
            else "sequential" if pk in sequential else "interactive"
        )  # fmt: skip
        figures[kind].add(
            match, moves[pk], ready=ready.get(pk) or match["created_at"], sent=sent.get(pk)
        )
    tournaments = Tournament.objects.filter(created_at__gte=start)
    by_status = defaultdict(int)
    for status in TournamentMatch.objects.filter(tournament__in=tournaments).values_list(
        "status", flat=True
    ):
        by_status[status] += 1
    kinds = {kind: figures[kind].report() for kind in KINDS}
    return {
        "kinds": kinds,
        "tournament_matches": dict(by_status),
        "tournaments": list(tournaments.values_list("status", flat=True)),
        "matches": sum(kind["matches"] for kind in kinds.values()),
        "aborted": sum(kind["aborted"] for kind in kinds.values()),
        "forfeited": sum(kind["forfeited"] for kind in kinds.values()),
        "unfinished": sum(kind["unfinished"] for kind in kinds.values()),
        "forfeits": [r for kind in figures.values() for r in kind.forfeits][:10],
        "forfeited_by": _count(m["forfeited_by"] for m in matches if m["forfeited_by"]),
        "unfinished_matches": [
            f"match {m['pk']} {m['status']} at ply {m['ply']}, {m['to_move']} to move"
            for m in matches if m["status"] in ("waiting", "active")
        ][:10],
    }


def _tournament_ready(TournamentMatch, ids: list[int]) -> tuple[dict, dict]:
    """Return, by game match id, when each tournament match was ready (its round became
    the current one: the tournament's start, or the end of the round before) and when its
    task was sent (backpressure's ``dispatched_at``; none on a tree without it)."""
    fields = {field.name for field in TournamentMatch._meta.get_fields()}
    rows = list(
        TournamentMatch.objects.filter(match_id__in=ids).values(
            "match_id", "tournament_id", "round", "tournament__started_at",
            *(["dispatched_at"] if "dispatched_at" in fields else []),
        )
    )  # fmt: skip
    ends: dict[tuple[int, int], object] = {}
    for tournament_id, round_number, finished_at in TournamentMatch.objects.filter(
        tournament_id__in={row["tournament_id"] for row in rows}, finished_at__isnull=False
    ).values_list("tournament_id", "round", "finished_at"):
        key = (tournament_id, round_number)
        ends[key] = max(ends.get(key, finished_at), finished_at)
    ready, sent = {}, {}
    for row in rows:
        previous = ends.get((row["tournament_id"], row["round"] - 1))
        ready[row["match_id"]] = previous if row["round"] and previous else row[
            "tournament__started_at"
        ]
        if row.get("dispatched_at"):
            sent[row["match_id"]] = row["dispatched_at"]
    return ready, sent


class _Kind:
    def __init__(self) -> None:
        self.statuses: dict[str, int] = defaultdict(int)
        self.forfeits: list[str] = []
        self.first_move: list[float] = []
        self.sent_to_first_move: list[float] = []
        self.turns: list[float] = []

    def add(
        self, match: dict, moves: list[tuple], *, ready: datetime, sent: datetime | None
    ) -> None:
        self.statuses[match["status"]] += 1
        if match["forfeit_seat"] is not None:
            self.forfeits.append(
                f"match {match['pk']} seat {match['forfeit_seat']} ({match['forfeited_by']}): "
                f"{match['forfeit_reason']}"[:200]
            )
        if moves:
            _ply, _seat, received, call_sent = moves[0]
            first = call_sent or received
            self.first_move.append((first - ready).total_seconds())
            if sent is not None:
                self.sent_to_first_move.append((first - sent).total_seconds())
        turn_start = match["started_at"]
        for _ply, seat, received, call_sent in moves:
            if turn_start is not None and match["arena_seats"] >> seat & 1:
                self.turns.append(((call_sent or received) - turn_start).total_seconds())
            turn_start = received

    def report(self) -> dict:
        matches = sum(self.statuses.values())
        return {
            "matches": matches,
            "finished": self.statuses["finished"],
            "aborted": self.statuses["aborted"],
            "forfeited": len(self.forfeits),
            "unfinished": self.statuses["waiting"] + self.statuses["active"],
            "first_move_wait": _spread(self.first_move),
            "sent_to_first_move": _spread(self.sent_to_first_move),
            "turn_wait": _spread(self.turns),
        }


def _count(names) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for name in names:
        counts[name] += 1
    return dict(counts)


def _spread(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {
        "n": len(values),
        "p50": round(statistics.median(ordered), 3),
        "p95": round(p95, 3),
        "max": round(ordered[-1], 3),
    }
