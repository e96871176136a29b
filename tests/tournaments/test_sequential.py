"""Sequential tests (tournaments.sequential, /api/v1/tests/, /tests/<id>/, manage.py sprt).

The pairs are played in this process (``inline_play``: no task is sent); the test on a
real worker is in ``test_sequential_real_worker.py``.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from bots import services as bot_services
from bots import versions
from bots.models import Bot
from games.models import Match
from tests.matches import token_client
from tournaments import sequential, sequential_pairs
from tournaments.models import RatingChange, SequentialPair, SequentialTest
from tournaments.services import inline_play

pytestmark = pytest.mark.django_db

FAST = {"model": "logistic", "elo0": 0.0, "elo1": 150.0, "max_games": 60}


@pytest.fixture
def builtins(db):
    return {bot.name: bot for bot in bot_services.builtin_bots_ensure()}


@pytest.fixture
def staff(user_factory):
    return user_factory(is_staff=True)


def own_bot(owner, name: str, player: str = "greedy") -> Bot:
    bot = Bot.objects.create(
        name=name, owner=owner, kind=Bot.Kind.BUILTIN, builtin=player,
        games=["durak", "volynshchik"],
    )  # fmt: skip
    versions.bot_version_first(bot=bot)
    return bot


def run_inline(test: SequentialTest) -> SequentialTest:
    """Play the test's pending pairs in this process until it ends."""
    with inline_play():
        while True:
            test.refresh_from_db()
            pending = test.pairs.filter(status=SequentialPair.Status.PENDING).first()
            if test.status != SequentialTest.Status.RUNNING or pending is None:
                return test
            sequential_pairs.sequential_pair_play(pair_id=pending.pk)


def create(user, **options) -> SequentialTest:
    with inline_play():
        return sequential.sequential_test_create(user=user, **options)


def test_a_much_better_candidate_is_accepted_and_the_test_links_its_matches(staff, builtins):
    test = run_inline(create(staff, candidate="greedy", baseline="random", **FAST))
    assert test.status == SequentialTest.Status.ACCEPTED
    assert sum(test.counts) == test.pairs_done == len(test.llr_history)
    assert test.llr >= sequential.sprt.llr_bounds(test.alpha, test.beta)[1]
    ids = sequential.sequential_test_matches(test)
    assert len(ids) == 2 * test.pairs_done
    assert not test.pairs.filter(status__in=sequential.IN_FLIGHT).exists()
    assert not Match.objects.filter(pk__in=ids, rated=True).exists()
    assert not RatingChange.objects.exists()


def test_a_much_worse_candidate_is_rejected(staff, builtins):
    test = run_inline(create(staff, candidate="random", baseline="greedy", **FAST))
    assert test.status == SequentialTest.Status.REJECTED


def test_head_to_head_pairs_play_one_deck_twice_with_the_seats_swapped(staff, builtins):
    test = create(staff, candidate="greedy", baseline="random", **FAST)
    pair = test.pairs.first()
    with inline_play():
        sequential_pairs.sequential_pair_play(pair_id=pair.pk)
    pair.refresh_from_db()
    first, second = pair.first, pair.second
    # One deck: the pair is a deal group, unsealed once its second match ended; each
    # match published a commitment of its own.
    assert first.seed == second.seed and first.deal_group_id == second.deal_group_id
    assert first.seed_commitment != second.seed_commitment
    assert not first.sealed and not second.sealed and first.deal_group.unsealed_at
    seats = [list(m.seats.order_by("index").values_list("bot__name", flat=True))
             for m in (first, second)]  # fmt: skip
    assert seats == [["greedy", "random"], ["random", "greedy"]]
    assert pair.outcome == sequential_pairs.pair_result(test, pair, first, second)


def test_head_to_head_outcome_is_the_candidates_points_over_both_games(staff, builtins):
    test = create(staff, candidate="greedy", baseline="random", **FAST)
    pair = test.pairs.first()

    def outcome(first_loser, second_loser):
        return sequential_pairs.pair_result(
            test, pair, Match(loser=first_loser), Match(loser=second_loser)
        )

    assert outcome(1, 0) == 4  # the baseline lost both: 2 points
    assert outcome(0, 1) == 0
    assert outcome(1, 1) == 2  # each seat 1 lost once: 1 point
    assert outcome(None, 0) == 3  # a draw and a win


def test_reference_pairs_put_candidate_then_baseline_in_one_seat_beside_the_reference(
    staff, builtins
):
    test = create(
        staff, candidate="greedy", baseline="random", players=3, mode="reference",
        reference="strong", **FAST,
    )  # fmt: skip
    pairs = list(test.pairs.order_by("index")[:3])
    assert [(p.deck, p.seat) for p in pairs] == [(0, 0), (0, 1), (0, 2)]
    assert sequential_pairs.pair_seating(test, 1, "first") == [
        builtins["strong"].pk, builtins["greedy"].pk, builtins["strong"].pk,
    ]
    assert sequential_pairs.pair_seating(test, 1, "second")[1] == builtins["random"].pk
    lost = Match(loser=1)
    kept = Match(loser=0)
    assert sequential_pairs.pair_result(test, pairs[1], kept, lost) == 4


def test_the_pairs_of_one_reference_deck_share_its_group_and_unseal_with_its_last(
    staff, builtins
):
    test = create(
        staff, candidate="greedy", baseline="random", players=3, mode="reference",
        reference="strong", **FAST,
    )  # fmt: skip
    pairs = list(test.pairs.order_by("index")[:3])
    with inline_play():
        for pair in pairs[:2]:
            sequential_pairs.sequential_pair_play(pair_id=pair.pk)
    played = Match.objects.filter(deal_group__isnull=False).order_by("pk")
    assert played.count() == 4 and played.values("seed").distinct().count() == 1
    assert played.values("seed_commitment").distinct().count() == 4
    assert all(m.sealed for m in played), "the deck's third pair is still to play"

    with inline_play():
        sequential_pairs.sequential_pair_play(pair_id=pairs[2].pk)

    assert Match.objects.filter(deal_group__isnull=False).count() == 6
    assert not Match.objects.filter(sealed=True).exists()


def test_reference_mode_is_decided_in_three_player_volynshchik(staff, builtins):
    test = run_inline(create(
        staff, candidate="greedy", baseline="random", game="volynshchik", players=3,
        mode="reference", **FAST,
    ))  # fmt: skip
    # Decided by its statistic. Which verdict is chance: the decks come from the test's
    # secret seed, and greedy's edge over random in a seat beside two strong players is
    # well under elo1, so a run may reject it (one suite run did).
    low, high = sequential.sprt.llr_bounds(test.alpha, test.beta)
    verdicts = {
        SequentialTest.Status.ACCEPTED: test.llr >= high,
        SequentialTest.Status.REJECTED: test.llr <= low,
        SequentialTest.Status.CAPPED: low < test.llr < high
        and test.pairs_done == test.max_games // 2,
    }
    assert verdicts.get(test.status), test.status
    assert sum(test.counts) == test.pairs_done == len(test.llr_history) > 0


def test_a_test_stops_at_its_cap_on_games(staff, builtins):
    test = run_inline(create(
        staff, candidate="greedy", baseline="random", model="logistic", elo0=0, elo1=2,
        max_games=4,
    ))  # fmt: skip
    assert test.status == SequentialTest.Status.CAPPED
    assert test.pairs_created == test.pairs_done == 2


@override_settings(SEQUENTIAL_GAMES_IN_FLIGHT=4)
def test_pairs_in_flight_are_capped_per_user_over_all_their_tests(staff, builtins):
    first = create(staff, candidate="greedy", baseline="random", **FAST)
    second = create(staff, candidate="strong", baseline="random", **FAST)
    assert first.pairs.count() == 2 and second.pairs.count() == 0
    with inline_play():
        sequential_pairs.sequential_pair_play(pair_id=first.pairs.first().pk)
    assert first.pairs.count() + second.pairs.count() == 3


def test_cancel_stops_a_test_and_leaves_no_pair_to_play(staff, builtins):
    test = create(staff, candidate="greedy", baseline="random", **FAST)
    sequential.sequential_test_cancel(test_id=test.pk)
    test.refresh_from_db()
    assert test.status == SequentialTest.Status.CANCELLED and test.finished_at
    assert not test.pairs.filter(status__in=sequential.IN_FLIGHT).exists()


def test_a_cancelled_test_unseals_the_pair_it_left_half_played(staff, builtins):
    from bots.play_to_end import match_play_to_end
    from games.errors import InvalidMatchRequest

    test = create(staff, candidate="greedy", baseline="random", **FAST)
    pair = test.pairs.first()
    first = Match.objects.get(pk=sequential_pairs._pair_match(pair.pk, "first", test))
    match_play_to_end(match_id=first.pk)
    first.refresh_from_db()
    assert first.status == Match.Status.FINISHED and first.sealed

    sequential.sequential_test_cancel(test_id=test.pk)

    first.refresh_from_db()
    assert not first.sealed and first.deal_group.abandoned
    with pytest.raises(InvalidMatchRequest, match="closed"):
        sequential_pairs._pair_match(pair.pk, "second", test)


def test_only_the_current_version_can_be_tested(staff, builtins, user):
    bot = own_bot(user, "mine")
    versions.bot_version_start(bot_id=bot.pk, reason="owner", label="v2")
    with pytest.raises(sequential.SequentialTestError, match="not the bot's current version"):
        create(staff, candidate="mine@1", baseline="greedy")
    test = create(staff, candidate="mine@v2", baseline="greedy", **FAST)
    assert test.candidate_version.label == "v2"


# --- API -------------------------------------------------------------------------------


def post(client, **body):
    with inline_play():
        return client.post("/api/v1/tests/", body, format="json")


def test_an_owner_tests_their_bot_against_a_builtin_and_reads_the_statistic(user, builtins):
    own_bot(user, "mine")
    client = token_client(user)
    answer = post(client, candidate="mine", baseline="greedy", **FAST)
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["candidate"] == "mine@1" and body["status"] == "running"
    assert body["statistic"]["counts"] == [0, 0, 0, 0, 0]
    assert body["statistic"]["llr_upper"] == pytest.approx(2.944, abs=1e-3)
    assert body["matches"] is None
    run_inline(SequentialTest.objects.get(pk=body["id"]))
    done = client.get(f"/api/v1/tests/{body['id']}/").json()
    assert done["status"] != "running" and len(done["matches"]) >= 2


@pytest.mark.parametrize(("candidate", "baseline"), [("mine", "theirs"), ("theirs", "greedy")])
def test_an_owner_may_not_test_someone_elses_bot(user, user_factory, builtins, candidate,
                                                 baseline):
    theirs = Bot.objects.create(
        name="theirs", owner=user_factory(), kind=Bot.Kind.HTTP, url="http://127.0.0.1:9/",
        games=["durak"],
    )  # fmt: skip
    versions.bot_version_first(bot=theirs)
    own_bot(user, "mine")
    answer = post(token_client(user), candidate=candidate, baseline=baseline)
    assert answer.status_code == 403
    assert not SequentialTest.objects.exists()


def test_only_staff_test_bots_that_are_not_theirs(user, staff, builtins):
    assert post(token_client(user), candidate="greedy", baseline="random").status_code == 403
    answer = post(token_client(staff), candidate="greedy", baseline="random", **FAST)
    assert answer.status_code == 201


@override_settings(SEQUENTIAL_TESTS_PER_DAY=1)
def test_tests_per_day_are_capped_with_429(user, builtins):
    own_bot(user, "mine")
    client = token_client(user)
    assert post(client, candidate="mine", baseline="greedy", **FAST).status_code == 201
    answer = post(client, candidate="mine", baseline="random", **FAST)
    assert answer.status_code == 429
    assert SequentialTest.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"candidate": "mine", "baseline": "nobody"},
        {"candidate": "mine@v9", "baseline": "greedy"},
        {"candidate": "mine", "baseline": "greedy", "elo0": 5, "elo1": 5},
        {"candidate": "mine", "baseline": "greedy", "alpha": 0.7},
        {"candidate": "mine", "baseline": "greedy", "max_games": 10**9},
        {"candidate": "mine", "baseline": "greedy", "players": 3},
        {"candidate": "mine", "baseline": "greedy", "mode": "reference", "reference": "mine"},
        {"candidate": "mine", "baseline": "mine"},
    ],
)
def test_a_request_that_makes_no_test_is_refused_with_400(user, builtins, body):
    own_bot(user, "mine")
    answer = post(token_client(user), **body)
    assert answer.status_code == 400, answer.content
    assert "error" in answer.json()
    assert not SequentialTest.objects.exists()


def test_only_the_creator_or_staff_cancels(user, user_factory, builtins):
    own_bot(user, "mine")
    test_id = post(token_client(user), candidate="mine", baseline="greedy", **FAST).json()["id"]
    other = token_client(user_factory())
    assert other.post(f"/api/v1/tests/{test_id}/cancel/").status_code == 403
    answer = token_client(user).post(f"/api/v1/tests/{test_id}/cancel/")
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"


def test_anonymous_users_read_but_do_not_start_tests(api_client, builtins):
    assert api_client.get("/api/v1/tests/").status_code == 200
    answer = api_client.post("/api/v1/tests/", {"candidate": "greedy"}, format="json")
    assert answer.status_code in (401, 403)


# --- Page and command ------------------------------------------------------------------


def test_the_page_draws_the_llr_against_its_bounds_and_refreshes_while_running(
    client, staff, builtins
):
    test = create(staff, candidate="greedy", baseline="random", **FAST)
    page = client.get(f"/tests/{test.pk}/").content.decode()
    assert 'aria-label="LLR over pairs"' in page and 'data-refresh="5"' in page
    run_inline(test)
    page = client.get(f"/tests/{test.pk}/").content.decode()
    assert 'data-refresh=""' in page and 'id="test-matches"' in page
    assert 'id="pentanomial"' in client.get(f"/tests/{test.pk}/?partial=1").content.decode()


def test_sprt_command_plays_the_test_in_process_and_prints_the_verdict(builtins):
    out = io.StringIO()
    call_command(
        "sprt", "greedy", "random", "--model", "logistic", "--elo1", "150",
        "--max-games", "60", stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "H1 accepted" in text and "LLR" in text
    assert SequentialTest.objects.get().status == SequentialTest.Status.ACCEPTED


def test_a_pair_that_ends_after_the_test_is_decided_does_not_count(staff, builtins):
    test = create(staff, candidate="greedy", baseline="random", **FAST)
    late, *_ = test.pairs.order_by("index")
    with inline_play():
        # Both matches played, then the test ends before the pair is recorded.
        for which in ("first", "second"):
            match_id = sequential_pairs._pair_match(late.pk, which, test)
            sequential_pairs.match_play_to_end(match_id=match_id)
        SequentialTest.objects.filter(pk=test.pk).update(status=SequentialTest.Status.REJECTED)
        assert sequential_pairs._pair_record(late.pk) == SequentialPair.Status.FAILED
    test.refresh_from_db()
    assert test.counts == [0] * 5 and test.pairs_done == 0
    assert not test.pairs.filter(status=SequentialPair.Status.DONE).exists()


def test_a_pair_whose_task_could_not_be_sent_is_sent_again_by_the_watchdog(
    staff, builtins, monkeypatch, django_capture_on_commit_callbacks
):
    from tournaments import tasks

    sent: list[int] = []

    def refused(pair_id):
        raise ConnectionError("broker away")

    monkeypatch.setattr(tasks.play_sequential_pair, "delay", refused)
    with django_capture_on_commit_callbacks(execute=True):
        test = sequential.sequential_test_create(
            user=staff, candidate="greedy", baseline="random", **FAST
        )
    pairs = test.pairs.all()
    assert {(p.status, p.error) for p in pairs} == {("pending", sequential.PAIR_NOT_SENT)}
    # A pending pair sent (no error) waits in its queue however long: it is not sent again.
    waiting = pairs.first()
    SequentialPair.objects.filter(pk=waiting.pk).update(error="")

    monkeypatch.setattr(tasks.play_sequential_pair, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.tournaments_watchdog()

    assert sent == [p.pk for p in pairs if p.pk != waiting.pk]
    assert not test.pairs.filter(error=sequential.PAIR_NOT_SENT).exists()
