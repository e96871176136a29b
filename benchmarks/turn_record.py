"""The database side of an HTTP bot's turn alone: the I/O pool's recording, in process.

    python -m benchmarks.turn_record [--matches 100] [--turns 4000] [--batch 8]
                                     [--baseline-ref main --rounds 3]
                                     [--lock /tmp/bench.lock] [--db-prefix cardserver_]

On a scratch PostgreSQL database and a Redis queue of its own (as ``benchmarks.bot_calls``),
starts ``--matches`` 2-player Durak matches between HTTP bots and plays them as a
bot-calls process does, without HTTP: a stand-in for the pool takes each call the
dispatch hands it, answers it at once with its first legal move, and the answers are
recorded ``--batch`` at a time by ``bots.pool.answers_record`` (the recording threads'
own function: the move, the claim moved on to the next call, the owner's share, the next
request built), until ``--turns`` moves or every match ended.

Reports per turn: this process's CPU time, its PostgreSQL backend's, the SQL statements
and transactions sent, the round trips to PostgreSQL they make (each transaction two
more: BEGIN and COMMIT), the Redis commands and the CPU time of the garbage collector
(``gc_us``, microseconds). No HTTP, no event loop, no broker: what it
measures is what the recording threads of ``bot_calls`` spend, with nothing else on the
machine's two cores counted in (CPU time, not wall time), so that a lever on that path
can be measured in seconds. ``py-spy record -o out.svg -- python -m
benchmarks.turn_record`` draws its flame graph.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path
from tempfile import mkdtemp

from benchmarks import harness, machine


class _Pool:
    """In place of ``bots.pool.CallPool``: keeps the calls submitted."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def submit(self, call: dict) -> None:
        self.calls.append(call)


def _answer(call: dict) -> dict:
    now = time.time()
    return {
        "move": call["payload"]["legal_moves"][0], "fault": None, "detail": "",
        "sent_at": now, "answered_at": now,
    }  # fmt: skip


def run(options) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    import bots.pool
    from benchmarks import probe
    from bots.driver import bot_turns_play
    from bots.models import Bot
    from games.seating import SeatHolder
    from games.services import match_create

    pool = bots.pool._POOL = _Pool()
    owner = get_user_model().objects.create_user(f"bench-{uuid.uuid4().hex[:6]}")
    bot_pair = Bot.objects.bulk_create(
        Bot(name=f"b{i}", owner=owner, kind="http", games=["durak"], secret="s",
            url=f"http://127.0.0.1:9/b/{i}")
        for i in range(2)
    )  # fmt: skip

    def start_match() -> None:
        match = match_create(
            creator=owner, game="durak", players=2, move_time_limit=30.0,
            seats=[SeatHolder(bot=bot_pair[0]), SeatHolder(bot=bot_pair[1])],
        )  # fmt: skip
        bot_turns_play(match_id=match.pk, pool=True)

    for _ in range(options.matches):
        start_match()
    # One backend through the count, whose CPU time is the database's side (a connection
    # lives CONN_MAX_AGE seconds otherwise; this one is made now).
    connection.settings_dict["CONN_MAX_AGE"] = None
    connection.close()
    connection.ensure_connection()
    probe.watch(connection)
    probe.collections_watch()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    counts = probe.COUNTS

    def play(most: int) -> int:
        turns = 0
        while turns < most:
            calls, pool.calls = pool.calls, []
            if not calls:
                break
            for start in range(0, len(calls), options.batch):
                batch = calls[start : start + options.batch]
                bots.pool.answers_record([(call, _answer(call)) for call in batch])
                turns += len(batch)
        return turns

    # What a pool process does as it becomes one, where the tree does it (main's may not):
    # its garbage collector's settings weigh on every turn.
    settle = getattr(bots.pool, "collector_settle", None)
    if settle is not None:
        settle()
    # A first round of every match, not counted: what a process does once (a loader's
    # set-up, the first reads of the seats' bots) is not a turn's cost.
    play(options.matches)
    before = dict(counts)
    cpu, backend_cpu = machine.own_cpu(), machine.pids_cpu_s([backend])
    turns = play(options.turns)
    cpu, backend_cpu = machine.own_cpu() - cpu, machine.pids_cpu_s([backend]) - backend_cpu
    each = {name: (counts[name] - before[name]) / turns for name in counts}
    result = {
        "turns": turns,
        "batch": options.batch,
        "cpu_ms_per_turn": {
            "recording": round(1000 * cpu / turns, 3),
            "postgres": round(1000 * backend_cpu / turns, 3),
            "total": round(1000 * (cpu + backend_cpu) / turns, 3),
        },
        "per_turn": {name: round(value, 2) for name, value in each.items()}
        | {"postgres_round_trips": round(each["statements"] + 2 * each["transactions"], 2)},
        "load": round(os.getloadavg()[0], 1),
    }
    print(
        f"{turns} turns recorded {options.batch} at a time ({options.matches} matches): CPU a "
        f"turn {result['cpu_ms_per_turn']} ms (the matches' starts not counted); a turn "
        f"{result['per_turn']}; load {result['load']}"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--turns", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=8, help="answers a commit")
    parser.add_argument("--server", default=harness.POSTGRES)
    parser.add_argument("--broker", default=f"{harness.REDIS}/12")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline-ref", help="also run REF's tree, rounds taking turns")
    parser.add_argument("--rounds", type=int, default=3, help="rounds a tree (baseline)")
    parser.add_argument("--lock", type=Path, help="each run holds an flock on this file")
    parser.add_argument("--db-prefix", default="cardserver_", help="scratch database's name")
    options = parser.parse_args()
    if options.baseline_ref:
        from benchmarks import baseline

        args = baseline.args_without_baseline()
        baseline.compare(
            options.baseline_ref, options.rounds, args, "benchmarks.turn_record", options.lock
        )
        return
    probe_dir = Path(mkdtemp())
    os.environ["BENCH_PROBE_DIR"] = str(probe_dir)
    name = f"{options.db_prefix}bench_{uuid.uuid4().hex[:8]}"
    with (
        harness.bench_lock(options.lock),
        harness.scratch_database(options.server, name=name) as database,
        harness.broker_queue(options.broker, required=True) as broker,
    ):
        env = harness.environment(database=database, broker=broker, var_dir=Path(mkdtemp()))
        env |= {"BOTS_CALLS_PER_OWNER": "1000000", "BOTS_ALLOW_PRIVATE_URLS": "1"}
        env |= {"DEBUG": "0", "SECRET_KEY": "benchmark-only-" + uuid.uuid4().hex}
        env |= {"CACHE_URL": options.broker}
        harness.django_setup(env)
        figures = run(options)
    harness.write_json(options.json, figures)


if __name__ == "__main__":
    main()
