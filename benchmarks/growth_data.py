"""The archive ``benchmarks.growth`` grows: realistic rows written in bulk SQL.

The shape is a ladder's year: 2-player Durak matches, every seat held by one of ``BOTS``
bots chosen with a skew (the busiest bot sits in about a fifth of the matches, as the
ladder's most active entrants do), 90% of them rated (a ledger row and two rating changes
each), a draw in fifty, a forfeit in a hundred, each bot on a first version for the
first half of the year and a second one after. One match in ten has its move log: a copy
of one of a few real matches played through the services at the start (same seed, same
moves), so its replay is a real replay. One tournament holds ``TOURNAMENT_MATCHES``
matches, twenty small ones fill the list, and one sequential test has
``SEQUENTIAL_PAIRS`` pairs.

Each step adds the matches from the current size to the next one. Its matches are spread
over the same year as the earlier ones (``created_at`` uniform over the year, ids in
time order within a step): an archive of any size spans a year, as the issue's measure
does, and ids and times stay nearly in the same order, as in a real archive.

Columns this module does not name get their type's zero value when they are NOT NULL
and have no default (``_fill``): a column another change adds does not break the growth.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

BOTS = 50
TEMPLATES = 12
TOURNAMENT_MATCHES = 2000
SEQUENTIAL_PAIRS = 500
POOL = "durak-2p"
YEAR_SECONDS = 365 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Cast:
    """What the timed requests name: a busy bot, its usual opponent, one match of each
    kind, the big tournament, a small one and the sequential test."""

    busy: str
    opponent: str
    quiet: str
    replay_match: int
    plain_match: int
    tournament: int
    small_tournament: int
    sequential_test: int


def _zero(data_type: str) -> str:
    if data_type in ("integer", "smallint", "bigint", "double precision", "real", "numeric"):
        return "0"
    if data_type == "boolean":
        return "false"
    if data_type in ("jsonb", "json"):
        return "'null'::jsonb" if data_type == "jsonb" else "'null'::json"
    if data_type.startswith("timestamp"):
        return "now()"
    return "''"


def _fill(cursor, table: str, given: dict[str, str]) -> tuple[str, str]:
    """Return (columns, expressions) of ``given`` plus a zero for every other NOT NULL
    column of ``table`` that has no default."""
    cursor.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s"
        " AND is_nullable = 'NO' AND column_default IS NULL AND is_identity = 'NO'",
        [table],
    )
    extra = {name: _zero(kind) for name, kind in cursor.fetchall() if name not in given}
    columns = {**given, **extra}
    return ", ".join(f'"{c}"' for c in columns), ", ".join(columns.values())


def insert_select(cursor, table: str, given: dict[str, str], rest: str) -> int:
    """``INSERT INTO table (...) SELECT ... rest``; return the rows written."""
    columns, expressions = _fill(cursor, table, given)
    cursor.execute(f'INSERT INTO "{table}" ({columns}) SELECT {expressions} {rest}')
    return cursor.rowcount


def seed_cast() -> None:
    """Write the bots, their versions, the pool and the template matches (size zero)."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from bots.models import Bot, BotVersion
    from games.models import Match
    from games.move_services import match_move_submit
    from games.seating import SeatHolder
    from games.selectors import match_state
    from games.services import match_create
    from tournaments.models import RatingPool

    users = get_user_model()
    owner = users.objects.create_user("growth-owner")
    year_ago = timezone.now() - timezone.timedelta(seconds=YEAR_SECONDS)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE growth_bot (rank int PRIMARY KEY, id int, v1 int, v2 int)"
        )
    for rank in range(BOTS):
        bot = Bot.objects.create(
            name=f"growth-{rank:02d}", owner=owner, kind="builtin", builtin="random",
            games=["durak"],
        )  # fmt: skip
        first = BotVersion.objects.create(bot=bot, label="v1", reason="registered")
        second = BotVersion.objects.create(bot=bot, label="v2", reason="owner")
        BotVersion.objects.filter(pk=first.pk).update(created_at=year_ago)
        BotVersion.objects.filter(pk=second.pk).update(
            created_at=year_ago + timezone.timedelta(seconds=YEAR_SECONDS / 2)
        )
        Bot.objects.filter(pk=bot.pk).update(version=second)
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO growth_bot VALUES (%s, %s, %s, %s)",
                [rank, bot.pk, first.pk, second.pk],
            )
    RatingPool.objects.get_or_create(key=POOL)

    # Real move logs to copy: played through the services, as a person's matches are.
    players = [users.objects.create_user(f"growth-player-{i}") for i in range(2)]
    rng = random.Random(7)
    templates = []
    for _ in range(TEMPLATES):
        match = match_create(
            creator=players[0], game="durak", players=2,
            seats=[SeatHolder(user=p) for p in players], notify=False,
        )  # fmt: skip
        while match.status == Match.Status.ACTIVE:
            move = rng.choice(match_state(match).legal_moves())
            match_move_submit(
                match_id=match.pk, seat=match.to_move, ply=match.ply, move=move, notify=False
            )
            match.refresh_from_db()
        templates.append(match.pk)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE growth_template AS SELECT row_number() OVER (ORDER BY id) - 1 AS k,"
            " id, seed, seed_commitment, dealer, ply, loser, result, end_reason"
            " FROM games_match WHERE id = ANY(%s)",
            [templates],
        )


def grow(start: int, end: int) -> None:
    """Add matches number ``start`` + 1 to ``end`` (counting only the grown ones)."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM games_match")
        (base,) = cursor.fetchone()
        cursor.execute("SELECT coalesce(max(sequence), 0) FROM tournaments_ratedmatch")
        (sequence,) = cursor.fetchone()
        cursor.execute("SELECT setseed(%s)", [(end % 1000) / 1000])
        count = end - start
        cursor.execute(
            "CREATE TEMP TABLE growth_step ON COMMIT DROP AS SELECT"
            f" {base} + g AS id,"
            " now() - make_interval(secs => %s) + make_interval(secs => %s * (g - 0.5) / %s)"
            "   AS at,"
            " (g + %s) %% 10 = 0 AS logged, random() < 0.9 AS rated,"
            " floor(%s * power(random(), 2.5))::int AS a,"
            " floor(%s * power(random(), 1.5))::int AS d,"
            " CASE WHEN random() < 0.02 THEN NULL ELSE (random() < 0.5)::int END AS loser,"
            " random() < 0.01 AS forfeit, (g + %s) %% %s AS k"
            " FROM generate_series(1, %s) AS g",
            [YEAR_SECONDS, YEAR_SECONDS, count, start, BOTS, BOTS - 1, start, TEMPLATES,
             count],
        )  # fmt: skip
        cursor.execute("ANALYZE growth_step")
        insert_select(cursor, "games_match", {
            "id": "s.id", "game": "'durak'", "players": "2", "deck_size": "36",
            "format": "'deal'", "status": "'finished'", "rated": "s.rated",
            "dealer": "CASE WHEN s.logged THEN t.dealer ELSE 0 END",
            "move_time_limit": "5.0", "seed": "t.seed", "seed_commitment": "t.seed_commitment",
            "seed_revealed": "true", "sealed": "false", "created_at": "s.at",
            "started_at": "s.at", "finished_at": "s.at + interval '40 seconds'",
            "ply": "CASE WHEN s.logged THEN t.ply ELSE 0 END",
            "loser": "CASE WHEN s.logged THEN t.loser WHEN s.forfeit THEN 0 ELSE s.loser END",
            "result": "CASE WHEN s.logged THEN t.result ELSE jsonb_build_object('loser',"
                      " CASE WHEN s.forfeit THEN 0 ELSE s.loser END, 'out_order', '[]'::jsonb)"
                      " END",
            "end_reason": "CASE WHEN s.logged THEN t.end_reason WHEN s.forfeit THEN 'forfeit'"
                          " WHEN s.loser IS NULL THEN 'both_out' ELSE 'loser' END",
            "forfeit_seat": "CASE WHEN s.forfeit AND NOT s.logged THEN 0 END",
            "forfeit_reason": "CASE WHEN s.forfeit AND NOT s.logged THEN 'timeout' ELSE '' END",
            "arena_seats": "3", "batch": "true", "rating_applied": "s.rated",
        }, "FROM growth_step s JOIN growth_template t ON t.k = s.k")  # fmt: skip
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('games_match', 'id'), max(id)) FROM games_match"
        )
        # The identity sequence: the grown matches took their ids here, not from it.
        # Seat 0 is a busy bot more often than not; seat 1 another bot, near it in rank.
        insert_select(cursor, "games_seat", {
            "match_id": "s.id", "index": "i", "bot_id": "b.id",
            "bot_version_id": "CASE WHEN s.at < now() - make_interval(secs => "
                              f"{YEAR_SECONDS // 2}) THEN b.v1 ELSE b.v2 END",
        }, "FROM growth_step s CROSS JOIN generate_series(0, 1) AS i JOIN growth_bot b ON"
           f" b.rank = CASE WHEN i = 0 THEN s.a ELSE (s.a + 1 + s.d) % {BOTS} END")  # fmt: skip
        cursor.execute(
            "CREATE TEMP TABLE growth_rated ON COMMIT DROP AS SELECT s.id, s.at,"
            f" {sequence} + row_number() OVER (ORDER BY s.id) AS sequence,"
            " m.loser FROM growth_step s JOIN games_match m ON m.id = s.id WHERE s.rated"
        )
        insert_select(cursor, "tournaments_ratedmatch", {
            "match_id": "r.id", "pool": f"'{POOL}'", "sequence": "r.sequence",
            "loser_bot_id": "(SELECT bot_id FROM games_seat WHERE match_id = r.id"
                            " AND index = r.loser)",
            "applied_at": "r.at + interval '41 seconds'",
        }, "FROM growth_rated r")  # fmt: skip
        # Ratings that wander like a ladder's: a bot's level plus a slow wave and noise.
        insert_select(cursor, "tournaments_ratingchange", {
            "match_id": "r.id", "bot_id": "st.bot_id", "pool": f"'{POOL}'",
            "sequence": "r.sequence", "seat": "st.index",
            "before": "1400 + 4 * (50 - b.rank) + 30 * sin(r.sequence / 5000.0 + b.rank)"
                      " + 10 * random()",
            "after": "1400 + 4 * (50 - b.rank) + 30 * sin(r.sequence / 5000.0 + b.rank)"
                     " + CASE WHEN st.index = r.loser THEN -8 ELSE 8 END",
            "lost": "coalesce(st.index = r.loser, false)",
            "created_at": "r.at + interval '41 seconds'",
        }, "FROM growth_rated r JOIN games_seat st ON st.match_id = r.id"
           " JOIN growth_bot b ON b.id = st.bot_id")  # fmt: skip
        insert_select(cursor, "games_move", {
            "match_id": "s.id", "ply": "mv.ply", "seat": "mv.seat", "move": "mv.move",
            "received_at": "s.at + make_interval(secs => mv.ply * 0.5)",
            "time_taken": "mv.time_taken", "idempotency_key": "''",
        }, "FROM growth_step s JOIN growth_template t ON t.k = s.k"
           " JOIN games_move mv ON mv.match_id = t.id WHERE s.logged")  # fmt: skip
        _ratings(cursor)


def _ratings(cursor) -> None:
    """Set every bot's live rating and counts from the ledger, as applying it would."""
    cursor.execute("DELETE FROM tournaments_rating WHERE pool = %s", [POOL])
    insert_select(cursor, "tournaments_rating", {
        "pool": f"'{POOL}'", "bot_id": "c.bot_id",
        "elo": "(SELECT after FROM tournaments_ratingchange x WHERE x.bot_id = c.bot_id"
               " AND x.pool = c.pool ORDER BY sequence DESC LIMIT 1)",
        "games": "count(*)", "losses": "count(*) FILTER (WHERE c.lost)",
        "draws": "count(*) FILTER (WHERE m.loser IS NULL)", "updated_at": "now()",
    }, "FROM tournaments_ratingchange c JOIN games_match m ON m.id = c.match_id"
       f" WHERE c.pool = '{POOL}' GROUP BY c.bot_id, c.pool")  # fmt: skip
    cursor.execute(
        "UPDATE tournaments_ratingpool SET matches_applied ="
        " (SELECT count(*) FROM tournaments_ratedmatch WHERE pool = %s) WHERE key = %s",
        [POOL, POOL],
    )


def seed_events() -> Cast:
    """Write the tournaments and the sequential test over the first grown matches, and
    return what the timed requests name."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM growth_bot ORDER BY rank")
        ids = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT id FROM auth_user WHERE username = 'growth-owner'")
        (owner,) = cursor.fetchone()
        cursor.execute("SELECT min(id) FROM games_match WHERE ply = 0 AND status = 'finished'")
        (first,) = cursor.fetchone()
        for number in range(21):
            size = TOURNAMENT_MATCHES if number == 0 else 10
            start = first + (0 if number == 0 else TOURNAMENT_MATCHES + 10 * number)
            cursor.execute(
                "INSERT INTO tournaments_tournament (name, game, players, deck_size,"
                " match_format, format, games_per_pairing, move_time_limit, rated, duplicate,"
                " seed, status, rounds_total, current_round, matches_total, matches_done,"
                " created_by_id, created_at, started_at, finished_at) VALUES (%s, 'durak', 2,"
                " 36, 'deal', 'round_robin', 2, 5.0, true, false, 'x', 'finished', 1, 1, %s,"
                " %s, %s, now() - interval '1 day' * %s, now() - interval '1 day' * %s,"
                " now() - interval '1 day' * %s) RETURNING id",
                [f"Growth cup {number}", size, size, owner, 30 - number, 30 - number,
                 29 - number],
            )  # fmt: skip
            (tournament,) = cursor.fetchone()
            cursor.execute(
                "INSERT INTO tournaments_entrant (tournament_id, bot_id, \"order\")"
                " SELECT %s, bot_id, row_number() OVER (ORDER BY bot_id) - 1 FROM"
                " (SELECT DISTINCT bot_id FROM games_seat WHERE match_id >= %s AND"
                " match_id < %s) AS b",
                [tournament, start, start + size],
            )  # fmt: skip
            insert_select(cursor, "tournaments_tournamentmatch", {
                "tournament_id": str(tournament), "index": "row_number() OVER (ORDER BY m.id)",
                "round": "1", "pairing": "row_number() OVER (ORDER BY m.id)", "rotation": "0",
                "table": "(SELECT jsonb_agg(bot_id ORDER BY index) FROM games_seat"
                         " WHERE match_id = m.id)",
                "match_id": "m.id", "status": "'finished'", "attempts": "1",
                "last_error": "''", "updated_at": "m.finished_at",
                "finished_at": "m.finished_at",
            }, f"FROM games_match m WHERE m.id >= {start} AND m.id < {start + size}")  # fmt: skip
            if number == 0:
                big = tournament
            elif number == 1:
                small = tournament
        cursor.execute(
            "INSERT INTO tournaments_sequentialtest (created_by_id, candidate_id, baseline_id,"
            " game, players, mode, model, elo0, elo1, alpha, beta, max_games,"
            " move_time_limit, seed, status, counts, llr, llr_history, pairs_created,"
            " pairs_done, created_at, finished_at) VALUES (%s, %s, %s, 'durak', 2,"
            " 'head_to_head', 'normalized', 0, 5, 0.05, 0.05, 2000, 5.0, 'x', 'accepted',"
            " '[50, 100, 150, 120, 80]'::jsonb, 2.95, (SELECT jsonb_agg(g / 170.0) FROM"
            " generate_series(1, %s) g), %s, %s, now() - interval '3 days',"
            " now() - interval '2 days') RETURNING id",
            [owner, ids[0], ids[1], SEQUENTIAL_PAIRS, SEQUENTIAL_PAIRS, SEQUENTIAL_PAIRS],
        )  # fmt: skip
        (test,) = cursor.fetchone()
        pairs_from = first + TOURNAMENT_MATCHES + 300
        insert_select(cursor, "tournaments_sequentialpair", {
            "test_id": str(test), "index": "g", "deck": "g", "seat": "0", "status": "'done'",
            "first_id": f"{pairs_from} + 2 * g", "second_id": f"{pairs_from} + 2 * g + 1",
            "outcome": "(g * 7) % 5", "attempts": "1", "error": "''", "updated_at": "now()",
        }, f"FROM generate_series(0, {SEQUENTIAL_PAIRS - 1}) AS g")  # fmt: skip
        cursor.execute(
            "SELECT min(id) FILTER (WHERE ply > 0), min(id) FILTER (WHERE ply = 0) FROM"
            " games_match WHERE status = 'finished' AND id > %s",
            [first],
        )
        replay, plain = cursor.fetchone()
    return Cast(
        busy="growth-00", opponent="growth-01", quiet=f"growth-{BOTS - 1:02d}",
        replay_match=replay, plain_match=plain, tournament=big, small_tournament=small,
        sequential_test=test,
    )  # fmt: skip
