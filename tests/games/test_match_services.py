"""The match services and selectors: snapshots, the cost of a move, forfeits, commitments."""

from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cardkit.engine import load_game
from cardkit.fairness import commitment_matches, decks_commitment, new_seed, seed_commitment
from games import errors
from games.match_endings import match_forfeit
from games.models import Match, Move
from games.move_services import ArenaMove, match_move_submit, match_moves_append, matches_locked
from games.seating import SeatHolder
from games.selectors import match_replayed_state, match_state
from games.services import match_create, match_snapshot_refresh
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(user_factory):
    return [user_factory(), user_factory()]


def test_state_comes_from_the_snapshot_without_a_query(pair, django_assert_num_queries):
    match = play_random_moves(start_match(pair), 10)

    with django_assert_num_queries(0):
        state = match_state(match)

    assert state.ply == 10


def test_state_behind_its_snapshot_is_replayed_from_the_log_and_cached_by_the_refresh(pair):
    match = play_random_moves(start_match(pair), 12)
    expected = match_state(match).to_json()
    Match.objects.filter(pk=match.pk).update(snapshot=None, snapshot_ply=None)
    match.refresh_from_db()

    state = match_snapshot_refresh(match=match)

    assert state.to_json() == expected
    match.refresh_from_db()
    assert (match.snapshot_ply, match.snapshot) == (12, expected)


def test_forfeit_of_a_match_behind_its_snapshot_stores_its_final_state(pair):
    match = play_random_moves(start_match(pair), 6)
    expected = match_state(match).to_json()
    Match.objects.filter(pk=match.pk).update(snapshot=None, snapshot_ply=None)

    match_forfeit(match_id=match.pk, seat=0, code="resign", detail="test")

    match.refresh_from_db()
    assert (match.snapshot_ply, match.snapshot) == (6, expected)


def test_reading_the_state_behind_its_snapshot_writes_nothing(pair):
    match = play_random_moves(start_match(pair), 12)
    expected = match_state(match).to_json()
    Match.objects.filter(pk=match.pk).update(snapshot=None, snapshot_ply=None)
    match.refresh_from_db()

    assert match_state(match).to_json() == expected
    match.refresh_from_db()
    assert (match.snapshot_ply, match.snapshot) == (None, None)


def test_stale_snapshot_is_replaced_when_the_log_is_ahead(pair):
    match = play_random_moves(start_match(pair), 5)
    old = match.snapshot
    match = play_random_moves(match, 3)
    Match.objects.filter(pk=match.pk).update(snapshot=old, snapshot_ply=5)
    match.refresh_from_db()

    assert match_state(match).ply == 8


def test_replayed_series_state_equals_the_engines(pair):
    match = play_random_moves(start_match(pair, format="fool"), 200, seed=3)
    Match.objects.filter(pk=match.pk).update(snapshot=None)
    match.refresh_from_db()

    series = load_game("durak", players=2).series(seed=match.seed)
    for move in Move.objects.filter(match=match).order_by("ply"):
        series = series.play(move.move)

    assert match_state(match).to_json() == series.to_json()


def test_a_move_costs_one_locked_select_one_insert_and_one_update(pair):
    match = play_random_moves(start_match(pair, format="fool"), 120, seed=5)
    state = match_state(match)

    with CaptureQueriesContext(connection) as queries:
        match_move_submit(
            match_id=match.pk, seat=match.to_move, ply=match.ply, move=state.legal_moves()[0]
        )

    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert kinds_of(statements) == ["SELECT games_match", *move_writes()]
    if connection.vendor == "postgresql":
        assert statements[0].endswith("FOR UPDATE")


# The moves' INSERT and the match's UPDATE: one statement (one round trip) on PostgreSQL,
# the INSERT in a WITH of the UPDATE (games.rows.moves_insert_match_update).
_WITH_INSERT = re.compile(
    r'WITH "moved" AS \(INSERT INTO "games_move" .*\) UPDATE "games_match" ', re.S
)


def move_writes() -> list[str]:
    """The statements that write a move: one on PostgreSQL, two elsewhere."""
    if connection.vendor == "postgresql":
        return ["INSERT games_move + UPDATE games_match"]
    return ["INSERT games_move", "UPDATE games_match"]


def kinds_of(statements: list[str]) -> list[str]:
    """Each statement's verb and table; a move's two writes made in one statement are one
    entry, ``INSERT games_move + UPDATE games_match``."""
    kinds = []
    for sql in statements:
        if _WITH_INSERT.match(sql):
            kinds.append("INSERT games_move + UPDATE games_match")
        else:
            kinds.append(re.match(r"\w+", sql).group(0) + " " + table(sql))
    return kinds


def table(sql: str) -> str:
    return re.search(r'(?:FROM|INTO|UPDATE) "?(\w+)"?', sql).group(1)


def test_move_records_when_it_came_and_how_long_the_seat_took(pair):
    match = start_match(pair)
    state = match_state(match)

    outcome = match_move_submit(
        match_id=match.pk, seat=match.to_move, ply=0, move=state.legal_moves()[0]
    )

    move = Move.objects.get(match=match, ply=0)
    assert move.received_at >= match.turn_started_at
    assert move.time_taken == pytest.approx(
        (move.received_at - match.turn_started_at).total_seconds()
    )
    assert outcome.replayed is False


def test_move_that_ends_the_match_finishes_it_and_reveals_the_seed(pair):
    match = play_random_moves(start_match(pair), 600, seed=1)

    assert match.status == Match.Status.FINISHED
    assert match.seed_revealed and match.finished_at and match.to_move is None
    assert match.end_reason in {"loser", "both_out", "repetition", "move_limit"}
    assert match.result == match_state(match).result
    assert match.loser == match.result["loser"]


def test_unique_constraint_is_the_last_guard_when_the_lock_is_bypassed(pair, monkeypatch):
    from games import move_services

    match = start_match(pair)
    before = Match.objects.get(pk=match.pk)
    state = match_state(before)
    first, second = state.legal_moves()[:2]
    match_move_submit(match_id=match.pk, seat=before.to_move, ply=0, move=first)
    # A writer that read the match before that move, as if it held no lock.
    monkeypatch.setattr(move_services, "match_row", lambda match_id, for_update=False: before)

    with pytest.raises(errors.StalePly) as refused:
        match_move_submit(match_id=match.pk, seat=before.to_move, ply=0, move=second)

    assert refused.value.current_ply == 1
    assert Move.objects.filter(match=match).count() == 1


# --- Forfeits ---------------------------------------------------------------------------


def test_forfeit_ends_the_match_with_the_seat_as_loser_and_the_reason(pair):
    match = play_random_moves(start_match(pair, move_time_limit=5), 4)

    match_forfeit(match_id=match.pk, seat=1, code="forfeit", detail="bot answered garbage")

    match.refresh_from_db()
    assert (match.status, match.loser, match.forfeit_seat) == ("finished", 1, 1)
    assert (match.end_reason, match.forfeit_reason) == ("forfeit", "bot answered garbage")
    assert match.result["loser"] == 1 and match.seed_revealed
    assert match.deadline_at is None


def test_forfeit_of_a_match_already_over_changes_nothing(pair):
    match = start_match(pair)
    match_forfeit(match_id=match.pk, seat=0, code="resign", detail="first")

    match_forfeit(match_id=match.pk, seat=1, code="timeout", detail="second")

    match.refresh_from_db()
    assert (match.loser, match.end_reason, match.forfeit_reason) == (0, "resign", "first")


def test_forfeit_for_a_ply_the_match_has_left_changes_nothing(pair):
    match = play_random_moves(start_match(pair), 3)

    match_forfeit(match_id=match.pk, seat=0, code="timeout", detail="late", expected_ply=2)

    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE


# --- Commitments ------------------------------------------------------------------------


def test_seed_commitment_is_the_sha256_of_the_seeds_ascii_hex():
    seed = new_seed()

    assert re.fullmatch(r"[0-9a-f]{64}", seed)
    assert seed_commitment("abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert commitment_matches(seed_commitment(seed), seed=seed)
    assert not commitment_matches(seed_commitment(seed), seed=new_seed())


def test_decks_commitment_hashes_the_compact_json_of_the_decks():
    assert decks_commitment([["6S", "7S"]]) == seed_commitment('[["6S","7S"]]')


def test_every_seed_deals_a_different_match(user_factory):
    users = [user_factory(), user_factory()]
    seeds = {start_match(users).seed for _ in range(5)}

    assert len(seeds) == 5


# --- Seat holders -----------------------------------------------------------------------


def test_seat_holders_of_a_started_match_are_remembered(pair, django_assert_num_queries):
    from games.seats_held import seats_of

    match = start_match([pair[0], pair[1]])
    assert seats_of(pair[1], match) == [1]

    with django_assert_num_queries(0):
        assert seats_of(pair[1], match.pk) == [1]


def test_seat_holders_of_a_waiting_match_are_asked_every_time(pair, django_assert_num_queries):
    from games.seats_held import seats_of
    from games.services import match_create, match_join

    match = match_create(
        creator=pair[0], game="durak", players=2, seats=[SeatHolder(user=pair[0]), None]
    )
    assert seats_of(pair[1], match) == []
    match_join(match_id=match.pk, user=pair[1])

    with django_assert_num_queries(1):
        assert seats_of(pair[1], match.pk) == [1]


def test_rated_match_refuses_explicit_decks(pair):
    from cardkit.engine.cards import deck_cards
    from games.errors import InvalidMatchRequest

    with pytest.raises(InvalidMatchRequest):
        start_match(pair, rated=True, decks=[deck_cards(36)])


def test_group_match_deals_deck_n_of_the_group_seed_and_commits_to_its_own_place(pair):
    import hashlib

    from cardkit.engine.cards import shuffled_deck
    from games.sealing import GroupDeal, deal_group_create

    group = deal_group_create(kind="ladder", key="ladder:test", size=2)
    first = start_match(pair, rated=True, deal=GroupDeal(group=group, number=0, copy=0))
    second = start_match(pair[::-1], rated=True, deal=GroupDeal(group=group, number=0, copy=1))

    def h(text: str) -> str:
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    assert first.seed == second.seed == h(f"cardserver-deal:{group.seed}:0")
    assert first.seed_commitment == h(f"cardserver-group:{group.seed}:0:0")
    assert second.seed_commitment == h(f"cardserver-group:{group.seed}:0:1")
    assert group.commitment == h(group.seed)
    assert first.sealed and second.sealed and first.decks is None
    assert match_state(first).reveal()["trump_card"] == shuffled_deck(first.seed, 36)[12]


def planned_moves(match: Match, count: int, *, seed: int = 0) -> list[ArenaMove]:
    """Return ``count`` random legal moves from the match's state, as the driver plans them."""
    rng = random.Random(seed)
    state, moves = match_state(match), []
    for _ in range(count):
        move = rng.choice(state.legal_moves())
        key = f"key-{match.ply + len(moves)}"
        moves.append(ArenaMove(state.to_move, move, timezone.now(), key))
        state = state.play(move)
    return moves


def test_moves_appended_together_cost_one_insert_and_replay_like_the_log(pair):
    together = start_match(pair)
    moves = planned_moves(together, 12)

    with CaptureQueriesContext(connection) as queries:
        match_moves_append(match_id=together.pk, ply=0, moves=moves)

    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert kinds_of(statements) == ["SELECT games_match", *move_writes()]
    together.refresh_from_db()
    assert together.ply == 12 and together.snapshot_ply == 12
    assert match_state(together).to_json() == replayed_state(together)
    logged = list(Move.objects.filter(match=together).order_by("ply"))
    assert [(m.seat, m.move, m.idempotency_key) for m in logged] == [
        (p.seat, p.move, p.idempotency_key) for p in moves
    ]
    # Each turn starts when the move before it was made.
    for before, after in zip(logged, logged[1:], strict=False):
        assert after.time_taken == pytest.approx(
            (after.received_at - before.received_at).total_seconds()
        )


def replayed_state(match: Match) -> dict:
    Match.objects.filter(pk=match.pk).update(snapshot=None)
    match.refresh_from_db()
    return match_state(match).to_json()


def test_the_next_moves_of_a_match_this_process_moved_do_not_read_its_snapshot(
    pair, django_capture_on_commit_callbacks, monkeypatch
):
    from cardserver import fastjson

    match = start_match(pair)
    with django_capture_on_commit_callbacks(execute=True):
        match_moves_append(match_id=match.pk, ply=0, moves=planned_moves(match, 1))
    match.refresh_from_db()
    snapshot, moves = match.snapshot, planned_moves(match, 2)
    decode, decoded = fastjson.loads, []
    monkeypatch.setattr(fastjson, "loads", lambda text: decoded.append(decode(text)) or decoded[-1])

    with CaptureQueriesContext(connection) as queries:
        match_moves_append(match_id=match.pk, ply=1, moves=moves)

    monkeypatch.undo()
    selects = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert len(selects) == 1 and snapshot not in decoded
    match.refresh_from_db()
    assert match.ply == 3 and match.snapshot == match_replayed_state(match).to_json()


def test_matches_locked_together_are_read_in_one_statement_for_their_moves(
    pair, django_capture_on_commit_callbacks
):
    # The I/O pool records answers that came at once this way (bots.pool).
    kept, unknown = start_match(pair), start_match(pair)
    with django_capture_on_commit_callbacks(execute=True):
        match_moves_append(match_id=kept.pk, ply=0, moves=planned_moves(kept, 1))
    kept.refresh_from_db()
    moves = {kept.pk: (1, planned_moves(kept, 2)), unknown.pk: (0, planned_moves(unknown, 2))}

    with (
        CaptureQueriesContext(connection) as queries,
        transaction.atomic(),
        matches_locked(match_ids=[unknown.pk, kept.pk]),
    ):
        for match_id, (ply, planned) in moves.items():
            match_moves_append(match_id=match_id, ply=ply, moves=planned, savepoint=False)

    # One locked read of both: the kept match's snapshot left out, the other's sent.
    selects = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert len(selects) == 1
    for match, ply in ((kept, 3), (unknown, 2)):
        match.refresh_from_db()
        assert match.ply == ply and match.snapshot == match_replayed_state(match).to_json()
        assert match.to_move == match_state(match).to_move


def test_a_match_moved_elsewhere_since_this_process_kept_its_state_plays_from_its_row(
    pair, django_capture_on_commit_callbacks
):
    match = start_match(pair)
    with django_capture_on_commit_callbacks(execute=True):
        match_moves_append(match_id=match.pk, ply=0, moves=planned_moves(match, 1))
    # Another process's moves: their commit tells this process nothing (no callbacks run).
    match.refresh_from_db()
    match_moves_append(match_id=match.pk, ply=1, moves=planned_moves(match, 3))
    match.refresh_from_db()
    moves = planned_moves(match, 2)

    match_moves_append(match_id=match.pk, ply=4, moves=moves)

    match.refresh_from_db()
    assert match.ply == 6 and match.snapshot == match_replayed_state(match).to_json()


def test_an_illegal_move_among_appended_moves_writes_none_of_them(pair):
    match = start_match(pair)
    moves = planned_moves(match, 6)
    moves[4] = ArenaMove(moves[4].seat, {"type": "attack", "cards": ["XX"]}, timezone.now())

    with pytest.raises(errors.IllegalMoveError, match="ply 4"):
        match_moves_append(match_id=match.pk, ply=0, moves=moves)

    assert not Move.objects.filter(match=match).exists()
    assert Match.objects.get(pk=match.pk).ply == 0


def test_appended_moves_must_answer_the_current_ply_and_turn(pair):
    match = play_random_moves(start_match(pair), 3)
    moves = planned_moves(match, 2)

    with pytest.raises(errors.StalePly):
        match_moves_append(match_id=match.pk, ply=2, moves=moves)
    wrong_seat = [ArenaMove(1 - moves[0].seat, moves[0].move, timezone.now())]
    with pytest.raises(errors.NotYourTurn):
        match_moves_append(match_id=match.pk, ply=3, moves=wrong_seat)

    assert Move.objects.filter(match=match).count() == 3


def test_appended_moves_that_end_the_match_finish_it(pair):
    match = start_match(pair)
    rng, state, moves = random.Random(2), match_state(match), []
    while not state.is_over:
        move = rng.choice(state.legal_moves())
        moves.append(ArenaMove(state.to_move, move, timezone.now()))
        state = state.play(move)

    match_moves_append(match_id=match.pk, ply=0, moves=moves)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.seed_revealed
    assert match.result == state.result and match.ply == len(moves)


def test_moves_appended_after_the_deadline_are_played_not_forfeited(pair):
    # The driver appends built-in players' moves; one that comes late means the arena
    # stalled (a worker died mid-match), and the match goes on from its log.
    match = start_match(pair, move_time_limit=1.0)
    moves = planned_moves(match, 3)
    late = [
        ArenaMove(m.seat, m.move, m.received_at + timedelta(seconds=60), m.idempotency_key)
        for m in moves
    ]

    after = match_moves_append(match_id=match.pk, ply=0, moves=late)

    assert (after.status, after.ply, after.forfeit_seat) == (Match.Status.ACTIVE, 3, None)
    assert Move.objects.filter(match=match).count() == 3


# --- Seat holders -----------------------------------------------------------------------


def test_a_seat_holder_is_a_user_or_a_bot_exactly_one(pair):
    with pytest.raises(ValueError):
        SeatHolder()
    assert SeatHolder(user=pair[0]).key == ("user", pair[0].pk)


def test_a_seat_given_as_a_dict_is_refused_naming_the_holder_type(pair):
    with pytest.raises(TypeError, match="SeatHolder"):
        match_create(creator=pair[0], game="durak", players=2, seats=[{"user": pair[0]}, None])
