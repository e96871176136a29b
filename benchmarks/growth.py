"""Time every read page and endpoint as the archive grows: 10^4, 10^5, 10^6 matches.

    python -m benchmarks.growth [--sizes 1e4,1e5,1e6] [--requests 20]
                                [--json artefacts/growth.json] [--after-grow COMMAND]
                                [--database NAME] [--lock /tmp/bench.lock]

Creates a scratch PostgreSQL database (``--server``; dropped at the end), migrates it,
and grows its archive with bulk SQL (``benchmarks.growth_data``: seats skewed towards a
few busy bots, rating changes, moves for one match in ten, a year of timestamps) to each
size in turn. At each size, after ``VACUUM ANALYZE``, it asks every read route of
``ROUTES`` once to warm up (counting its queries and keeping the slowest), then
``--requests`` times through Django's test client with ``DEBUG`` off (the views, the
templates and the database as a server runs them, without the socket), and records the
p50 and max of each. It prints a table of p50 (max) per size, and, for the largest size,
``EXPLAIN ANALYZE`` of the slowest query of each route. ``--after-grow`` names a
management command to run after each growth step (one that rebuilds kept figures from
the log, for instance). The figures go to ``--json``; docs/archive-growth.md has them.
``--lock`` names a file to hold an exclusive ``flock`` on while timing (not while growing,
which at 10^6 takes long enough that other runs should not wait for it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import growth_data, harness

# (name, path template); the names in braces come from growth_data.Cast, ``{next}`` is
# the `next` link of the API's first archive page, ``{history_next}`` that of the busy
# bot's rating history.
ROUTES = [
    ("home", "/"),
    ("health", "/api/v1/health/"),
    ("archive", "/matches/"),
    ("archive ?bot", "/matches/?bot={busy}"),
    ("archive ?bot&opponent", "/matches/?bot={busy}&opponent={opponent}"),
    ("api matches", "/api/v1/matches/"),
    ("api matches next page", "{next}"),
    ("api matches ?bot", "/api/v1/matches/?bot={busy}"),
    ("api matches ?bot (quiet bot)", "/api/v1/matches/?bot={quiet}"),
    ("api matches ?bot&opponent", "/api/v1/matches/?bot={busy}&opponent={opponent}"),
    ("api matches ?finished_after", "/api/v1/matches/?finished_after={month_ago}"),
    ("match page", "/matches/{replay_match}/"),
    ("api match", "/api/v1/matches/{replay_match}/"),
    ("api replay", "/api/v1/matches/{replay_match}/replay/"),
    ("bot page", "/bots/{busy}/"),
    ("bots", "/bots/"),
    ("api bots", "/api/v1/bots/"),
    ("api bot", "/api/v1/bots/{busy}/"),
    ("api opponents", "/api/v1/bots/{busy}/opponents/"),
    ("api versions", "/api/v1/bots/{busy}/versions/"),
    ("head-to-head page", "/bots/{busy}/vs/{opponent}/"),
    ("leaderboard", "/leaderboard/durak-2p/"),
    ("api leaderboard", "/api/v1/ratings/durak-2p/"),
    ("api rating history", "/api/v1/ratings/bots/{busy}/"),
    ("api rating history next page", "{history_next}"),
    ("tournaments", "/tournaments/"),
    ("tournament page", "/tournaments/{tournament}/"),
    ("tournament page (10 matches)", "/tournaments/{small_tournament}/"),
    ("api tournaments", "/api/v1/tournaments/"),
    ("api tournament", "/api/v1/tournaments/{tournament}/"),
    ("api standings", "/api/v1/tournaments/{tournament}/standings/"),
    ("sequential test page", "/tests/{sequential_test}/"),
    ("api sequential tests", "/api/v1/tests/"),
    ("api sequential test", "/api/v1/tests/{sequential_test}/"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="1e4,1e5,1e6", help="archive sizes in matches, ascending, e.g. 1e4,1e5"
    )
    parser.add_argument("--requests", type=int, default=20, help="timed requests per route")
    parser.add_argument("--server", default=harness.POSTGRES)
    parser.add_argument("--json", type=Path, default=harness.BASE_DIR / "artefacts" / "growth.json")
    parser.add_argument("--after-grow", default="", help="management command run after growth")
    parser.add_argument("--only", default="", help="comma-separated route names to time")
    parser.add_argument("--database", default="", help="scratch database name (dropped at end)")
    parser.add_argument("--lock", type=Path, help="file to flock while timing, not growing")
    options = parser.parse_args()
    sizes = [int(float(size)) for size in options.sizes.split(",")]
    if sizes != sorted(sizes) or sizes[0] < 5000:
        sys.exit("--sizes: ascending, each at least 5000 (the tournaments take 2,300 matches)")
    os.environ.update({
        "DEBUG": "0", "SECRET_KEY": "growth-benchmark", "ALLOWED_HOSTS": "testserver",
        "SECURE_SSL_REDIRECT": "0", "THROTTLE_ANON": "off", "THROTTLE_USER": "off",
        "LOG_LEVEL": "ERROR",
    })  # fmt: skip
    _wait_for_a_connection(options.server)
    with (
        tempfile.TemporaryDirectory() as var_dir,
        harness.scratch_database(options.server, name=options.database) as db,
    ):
        harness.django_setup(harness.environment(database=db, var_dir=Path(var_dir)))
        figures = run(options, sizes)
    options.json.parent.mkdir(parents=True, exist_ok=True)
    harness.write_json(options.json, figures)
    print(f"\nFigures written to {options.json}")


def _wait_for_a_connection(server: str, seconds: float = 600) -> None:
    """Wait until the server takes a connection: on a shared machine another run may hold
    every one of them for a while ("too many clients already")."""
    import psycopg

    deadline = time.monotonic() + seconds
    while True:
        try:
            psycopg.connect(f"{server}/postgres", connect_timeout=5).close()
            return
        except psycopg.OperationalError as error:
            if time.monotonic() > deadline:
                sys.exit(f"PostgreSQL takes no connection: {error}")
            time.sleep(5)


def run(options, sizes: list[int]) -> dict:
    from django.core.management import call_command
    from django.db import connection

    # DEBUG off serves the hashed names of collected static files, as production does.
    call_command("collectstatic", interactive=False, verbosity=0)
    started = time.perf_counter()
    growth_data.seed_cast()
    print(f"Bots and template matches: {time.perf_counter() - started:.1f} s", flush=True)
    figures: dict = {"requests": options.requests, "sizes": {}, "load": os.getloadavg()[0]}
    grown, cast = 0, None
    only = {name.strip() for name in options.only.split(",") if name.strip()}
    for size in sizes:
        started = time.perf_counter()
        growth_data.grow(grown, size)
        grow_seconds = time.perf_counter() - started
        if cast is None:
            cast = growth_data.seed_events()
        grown = size
        if options.after_grow:
            call_command(options.after_grow)
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        vacuum_seconds = time.perf_counter() - started
        tables = table_sizes()
        print(f"\n== {size:,} matches: grown in {grow_seconds:.0f} s, vacuum analyze "
              f"{vacuum_seconds:.0f} s; " + ", ".join(
                  f"{name} {rows:,} rows {size_bytes / 2**20:.0f} MiB"
                  for name, (rows, size_bytes) in tables.items()), flush=True)  # fmt: skip
        layouts = compact_log()
        flush_dirty_pages()
        with harness.bench_lock(options.lock):
            timings = time_routes(cast, options.requests, only)
            replay = replay_figures(cast.replay_match)
        print(f"Move log: {layouts}\nReplay: {replay}", flush=True)
        figures["sizes"][str(size)] = {
            "grow_s": grow_seconds, "tables": tables, "routes": timings,
            "move_log": layouts, "replay": replay,
        }  # fmt: skip
    print_table(figures)
    largest = figures["sizes"][str(sizes[-1])]["routes"]
    print(f"\n== EXPLAIN ANALYZE of each route's slowest query at {sizes[-1]:,} matches")
    with harness.bench_lock(options.lock):
        for name, route in largest.items():
            if route.get("slowest_sql"):
                route["plan"] = explain(route["slowest_sql"])
                print(f"\n-- {name} ({route['slowest_ms']:.1f} ms, {route['queries']} queries):"
                      f"\n{route['slowest_sql'][:600]}\n{route['plan']}")  # fmt: skip
    return figures



def flush_dirty_pages() -> None:
    """Write the growth's dirty pages out before the timing, so that PostgreSQL's
    checkpointer does not write a gigabyte of them in the middle of it (a CHECKPOINT needs
    a superuser or ``pg_checkpoint``; without, the timing goes on and says so)."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("CHECKPOINT")
    except DatabaseError as exc:
        print(f"No CHECKPOINT before the timing ({exc}); the checkpointer may run through it")


def table_sizes() -> dict[str, tuple[int, int]]:
    """Return (rows, bytes with indexes and TOAST) of the archive's big tables."""
    from django.db import connection

    names = ["games_match", "games_seat", "games_move", "tournaments_ratingchange",
             "tournaments_ratedmatch"]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples::bigint, pg_total_relation_size(oid) FROM pg_class"
            " WHERE relname = ANY(%s)",
            [names],
        )
        return {name: (rows, size) for name, rows, size in cursor.fetchall()}


def replay_figures(match_id: int) -> dict:
    """Time a replay's two parts, median of 20 over the logged matches nearest
    ``match_id``: reading a match's log (its rows of the move table) and replaying it
    through the engine; and reading the same log from a compact copy (one row a match,
    ``compact_log``), the layout docs/archive-growth.md weighs."""
    from django.db import connection

    from games.models import Match
    from games.selectors import match_log, match_replay_steps

    ids = list(
        Match.objects.filter(pk__gte=match_id, ply__gt=0).order_by("pk")
        .values_list("pk", flat=True)[:20]
    )  # fmt: skip
    reads, replays, compact = [], [], []
    for pk in ids:
        match = Match.objects.get(pk=pk)
        started = time.perf_counter()
        moves = match_log(match)
        middle = time.perf_counter()
        match_replay_steps(match)
        ended = time.perf_counter()
        reads.append(1000 * (middle - started))
        replays.append(1000 * (ended - middle) - reads[-1])
    with connection.cursor() as cursor:
        for pk in ids:
            started = time.perf_counter()
            cursor.execute("SELECT log FROM compact_log WHERE match_id = %s", [pk])
            cursor.fetchone()
            compact.append(1000 * (time.perf_counter() - started))
    return {
        "moves": len(moves), "log_read_p50_ms": statistics.median(reads),
        "engine_replay_p50_ms": statistics.median(replays),
        "compact_read_p50_ms": statistics.median(compact),
    }  # fmt: skip


def compact_log() -> dict:
    """Write every logged match's moves as one row (a JSON array of [seat, move, seconds]
    in ply order) to ``compact_log``, and return the sizes of both layouts."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS compact_log")
        cursor.execute(
            "CREATE TABLE compact_log AS SELECT match_id, jsonb_agg(jsonb_build_array(seat,"
            " move, round(time_taken::numeric, 3)) ORDER BY ply) AS log FROM games_move"
            " GROUP BY match_id"
        )
        cursor.execute("ALTER TABLE compact_log ADD PRIMARY KEY (match_id)")
        cursor.execute("VACUUM ANALYZE compact_log")
        cursor.execute(
            "SELECT (SELECT count(*) FROM games_move), (SELECT count(*) FROM compact_log),"
            " pg_relation_size('games_move'), pg_indexes_size('games_move'),"
            " pg_total_relation_size('games_move'), pg_total_relation_size('compact_log')"
        )
        moves, logs, heap, indexes, total, compact = cursor.fetchone()
    return {
        "moves": moves, "logged_matches": logs, "move_heap_bytes": heap,
        "move_index_bytes": indexes, "move_total_bytes": total, "compact_total_bytes": compact,
        "move_bytes_per_move": total / moves, "compact_bytes_per_move": compact / moves,
    }  # fmt: skip


def time_routes(cast, requests: int, only: set[str]) -> dict:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    client = Client()
    names = vars(cast) if hasattr(cast, "__dict__") else {
        field: getattr(cast, field) for field in cast.__slots__}  # fmt: skip
    month_ago = (timezone.now() - timezone.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    first_page = client.get("/api/v1/matches/").json()
    history = client.get(f"/api/v1/ratings/bots/{cast.busy}/").json()
    names = {
        **names, "month_ago": month_ago, "next": _path(first_page.get("next") or ""),
        "history_next": _path(history.get("next") or "", f"/api/v1/ratings/bots/{cast.busy}/"),
    }  # fmt: skip
    results = {}
    for name, template in ROUTES:
        if only and name not in only:
            continue
        path = template.format(**names)
        with CaptureQueriesContext(connection) as captured:
            answer = client.get(path)
        queries = [q for q in captured.captured_queries if not q["sql"].startswith("SAVEPOINT")]
        slowest = max(queries, key=lambda q: float(q["time"]), default=None)
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            client.get(path)
            times.append(1000 * (time.perf_counter() - started))
        results[name] = {
            "path": path, "status": answer.status_code, "bytes": len(answer.content),
            "queries": len(queries), "p50_ms": statistics.median(times), "max_ms": max(times),
            "times_ms": times,
            "slowest_ms": 1000 * float(slowest["time"]) if slowest else 0.0,
            "slowest_sql": slowest["sql"] if slowest else "",
        }  # fmt: skip
        print(f"{name:32} {answer.status_code} {len(queries):3} queries "
              f"p50 {results[name]['p50_ms']:8.1f} ms  max {max(times):8.1f} ms  "
              f"{len(answer.content) / 1024:7.1f} kB", flush=True)  # fmt: skip
    return results


def _path(url: str, default: str = "/api/v1/matches/") -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path or default


def explain(sql: str) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def print_table(figures: dict) -> None:
    sizes = list(figures["sizes"])
    header = "| route | " + " | ".join(f"{int(s):,}" for s in sizes) + " |"
    print("\n" + header + "\n|---|" + "---|" * len(sizes))
    routes = figures["sizes"][sizes[0]]["routes"]
    for name in routes:
        cells = []
        for size in sizes:
            route = figures["sizes"][size]["routes"].get(name)
            cells.append(f"{route['p50_ms']:.0f} ({route['max_ms']:.0f})" if route else "")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
