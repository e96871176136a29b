"""What the shape tests do inside an arena's own process (``tests.shapes.arena``): start
the matches of every path on which a built-in bot answers another player, and report how
each path's matches ended and how soon each built-in reply came."""

from __future__ import annotations

import json
import secrets
import statistics
import time

# The paths, each a kind of match on which a built-in bot replies to another player.
PATHS = ("tournament", "ladder", "sequential", "person")


def every_path_play(*, bot_url: str, timeout: float = 150.0) -> None:
    """Start a tournament, two ladder deals and a sequential test of the HTTP bot at
    ``bot_url`` against built-in bots, and two matches of a person against one; play the
    person's moves as soon as it is their turn (through ``match_move_submit``, as the API
    does) until every match ended or ``timeout`` seconds passed; print the report.

    The built-in bots are the quick ones (random, greedy): the replies measure the hops
    between the players, not two CPU workers' queue behind long matches of ``strong``
    (a question of capacity: docs/recovery.md)."""
    from django.contrib.auth import get_user_model

    from bots.services import bot_register, builtin_bots_ensure
    from games.models import DealGroup
    from games.sealing import deal_group_create
    from games.seating import SeatHolder
    from games.services import match_create
    from tournaments.creation import tournament_create
    from tournaments.ladder import _ladder_match_create
    from tournaments.sequential import sequential_test_create
    from tournaments.services import tournament_start

    users = get_user_model().objects
    owner = users.create(username="owner", is_staff=True)
    person = users.create(username="person")
    random_, greedy, _strong = builtin_bots_ensure()
    instant, _secret = bot_register(
        owner=owner, name="instant", kind="http", games=["durak"], url=bot_url
    )
    tournament = tournament_create(
        creator=None, name="shapes", game="durak", players=2,
        bots=[instant, random_, greedy], games_per_pairing=2, move_time_limit=5.0,
        rated=False,
    )  # fmt: skip
    tournament_start(tournament_id=tournament.pk)
    for order in ([instant, greedy], [random_, instant]):
        # One deal of a ladder table, as the tick deals it (its seats chosen here).
        group = deal_group_create(
            kind=DealGroup.Kind.LADDER, key=f"ladder:{secrets.token_hex(8)}", size=2
        )
        _ladder_match_create("durak", 2, order, group=group)
    sequential_test_create(
        user=owner, candidate="instant", baseline="random", max_games=4, trusted=True
    )
    for _ in range(2):
        match_create(
            creator=person, game="durak", players=2, move_time_limit=30.0,
            seats=[SeatHolder(user=person), SeatHolder(bot=greedy)],
        )  # fmt: skip
    _play_person(person, timeout)
    print(json.dumps(every_path_report()))


def _play_person(person, timeout: float) -> None:
    from games.models import Match
    from games.move_services import match_move_submit
    from games.selectors import match_state

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _unfinished():
        for match in Match.objects.filter(status="active", seats__user=person):
            seat = match.seats.get(user=person).index
            if match.to_move == seat:
                move = match_state(match).legal_moves()[0]
                match_move_submit(match_id=match.pk, seat=seat, ply=match.ply, move=move)
        time.sleep(0.05)


def _unfinished() -> bool:
    from games.models import Match

    return Match.objects.filter(status__in=["waiting", "active"]).exists() or _records_pending()


def _records_pending() -> bool:
    from tournaments.models import SequentialPair, Tournament

    return (
        Tournament.objects.filter(status="running").exists()
        or SequentialPair.objects.exclude(status__in=["done", "failed"]).exists()
    )


def every_path_report() -> dict:
    """For each path: its matches by status, forfeits, the most attempts a tournament
    match or ladder deal took, and each built-in reply's delay (seconds from the move
    before it, by another player, to the reply)."""
    from games.models import Match, Move
    from tournaments.models import LadderMatch, SequentialPair, TournamentMatch

    paths = {
        "tournament": list(TournamentMatch.objects.values_list("match_id", flat=True)),
        "ladder": list(LadderMatch.objects.values_list("match_id", flat=True)),
        "sequential": [
            m
            for pair in SequentialPair.objects.values_list("first_id", "second_id")
            for m in pair
        ],
        "person": list(Match.objects.filter(seats__user__username="person").values_list(
            "pk", flat=True
        )),
    }
    attempts = list(TournamentMatch.objects.values_list("attempts", flat=True)) + list(
        LadderMatch.objects.values_list("attempts", flat=True)
    )
    report = {"attempts_max": max(attempts, default=0), "paths": {}}
    for path, match_ids in paths.items():
        matches = Match.objects.filter(pk__in=[m for m in match_ids if m])
        statuses = list(matches.values_list("status", flat=True))
        replies = []
        for match in matches.prefetch_related("seats__bot"):
            builtin = {s.index for s in match.seats.all() if s.bot and s.bot.kind == "builtin"}
            moves = list(Move.objects.filter(match=match).order_by("ply"))
            for before, reply in zip(moves, moves[1:], strict=False):
                if reply.seat in builtin and before.seat not in builtin:
                    replies.append((reply.received_at - before.received_at).total_seconds())
        report["paths"][path] = {
            "matches": len(match_ids),
            "statuses": sorted(statuses),
            "forfeits": matches.exclude(forfeit_seat=None).count(),
            "replies": len(replies),
            "reply_median": statistics.median(replies) if replies else None,
            "reply_max": max(replies, default=None),
        }
    return report


def tournament_start(*, games: int, bot_url: str) -> None:
    """Start a Durak tournament of the HTTP bot at ``bot_url`` and the built-in bots greedy
    and strong (``games`` games a pairing); print its id."""
    from django.contrib.auth import get_user_model

    from bots.services import bot_register, builtin_bots_ensure
    from tournaments.creation import tournament_create
    from tournaments.services import tournament_start

    owner = get_user_model().objects.create(username="owner")
    instant, _secret = bot_register(
        owner=owner, name="instant", kind="http", games=["durak"], url=bot_url
    )
    _random, greedy, strong = builtin_bots_ensure()
    tournament = tournament_create(
        creator=None, name="recovery", game="durak", players=2, bots=[instant, greedy, strong],
        games_per_pairing=games, move_time_limit=5.0, rated=False,
    )  # fmt: skip
    tournament_start(tournament_id=tournament.pk)
    print(json.dumps({"tournament": tournament.pk}))


def matches_in_play() -> None:
    """Print the moves so far of the active matches that have some, by match id."""
    from games.models import Match

    print(json.dumps({
        str(match.pk): list(match.moves.order_by("ply").values_list("move", flat=True))
        for match in Match.objects.filter(status="active", ply__gt=2)
    }))  # fmt: skip


def beat_duties(*, seconds: float, every: float = 2.0, until_finished: bool = False) -> None:
    """Do what beat does, every ``every`` seconds for ``seconds`` (or until no tournament
    runs): hand over the turns whose claim lapsed, run the tournament watchdog. Print the
    tournaments' matches: status, attempts, error, and when each match moved last."""
    from bots.tasks import resume_abandoned_turns
    from tournaments.models import Tournament, TournamentMatch
    from tournaments.services import tournaments_watchdog

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        resume_abandoned_turns()
        tournaments_watchdog()
        if until_finished and not Tournament.objects.filter(status="running").exists():
            break
        time.sleep(every)
    print(json.dumps({
        "tournaments": list(Tournament.objects.values_list("status", flat=True)),
        "matches": [
            {"status": tm.status, "attempts": tm.attempts, "error": tm.last_error,
             "match": tm.match_id, "ply": tm.match.ply if tm.match else None}
            for tm in TournamentMatch.objects.select_related("match")
        ],
    }))  # fmt: skip


def moves_of(match_ids: list[int]) -> None:
    """Print each match's moves, by id."""
    from games.models import Move

    print(json.dumps({
        str(match_id): list(
            Move.objects.filter(match_id=match_id).order_by("ply").values_list("move", flat=True)
        )
        for match_id in match_ids
    }))  # fmt: skip
