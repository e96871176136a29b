"""Backpressure: a tournament's matches go to the workers a few at a time, per tournament,
per owner and in all, and the next is sent as each one ends."""

import pytest

import tournaments.backpressure
from tournaments.creation import tournament_create
from tournaments.dispatch import inline_play
from tournaments.models import TournamentMatch
from tournaments.services import tournament_match_play, tournament_start
from tournaments.tasks import tournaments_watchdog

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """The tournament matches sent to the workers, in order (the broker is not read here)."""
    ids: list[int] = []
    monkeypatch.setattr(tournaments.backpressure, "send_round", ids.extend)
    return ids


@pytest.fixture
def slots(settings):
    def set_slots(*, tournament: int = 100, owner: int = 100, total: int = 100) -> None:
        settings.TOURNAMENT_IN_FLIGHT_PER_TOURNAMENT = tournament
        settings.TOURNAMENT_IN_FLIGHT_PER_OWNER = owner
        settings.TOURNAMENT_IN_FLIGHT = total

    return set_slots


def create(bot_factory, creator):
    """A round robin of six bots: one round of 30 matches."""
    return tournament_create(
        bots=[bot_factory() for _ in range(6)], creator=creator, name="t", game="durak",
        players=2, games_per_pairing=2, move_time_limit=5.0,
    )  # fmt: skip


def start(tournament, capture):
    with capture(execute=True):
        tournament_start(tournament_id=tournament.pk)


def in_flight(tournament) -> int:
    return TournamentMatch.objects.filter(
        tournaments.backpressure.in_flight(), tournament=tournament
    ).count()


def test_a_tournament_sends_only_its_slots_and_the_next_match_when_one_ends(
    bot_factory, user_factory, quiet_turns, slots, sent, django_capture_on_commit_callbacks
):
    slots(tournament=3)
    tournament = create(bot_factory, user_factory())

    start(tournament, django_capture_on_commit_callbacks)

    first_round = TournamentMatch.objects.filter(tournament=tournament, round=0).order_by("index")
    assert first_round.count() == 30
    assert sent == list(first_round.values_list("pk", flat=True)[:3])
    with django_capture_on_commit_callbacks(execute=True):
        assert tournament_match_play(tournament_match_id=sent[0]) == "finished"
    assert sent[3:] == [first_round[3].pk]
    assert in_flight(tournament) == 3


def test_one_owners_tournaments_share_the_owner_slots_and_another_owner_gets_the_rest(
    bot_factory, user_factory, quiet_turns, slots, sent, django_capture_on_commit_callbacks
):
    slots(tournament=4, owner=5, total=8)
    big_owner, other_owner = user_factory(), user_factory()
    first = create(bot_factory, big_owner)
    second = create(bot_factory, big_owner)
    other = create(bot_factory, other_owner)

    for tournament in (first, second, other):
        start(tournament, django_capture_on_commit_callbacks)

    assert (in_flight(first), in_flight(second), in_flight(other)) == (4, 1, 3)
    assert len(sent) == 8


def test_the_slots_in_all_are_shared_one_match_per_tournament_in_turn(
    bot_factory, user_factory, quiet_turns, slots, sent, django_capture_on_commit_callbacks
):
    slots(tournament=4, total=6)
    first = create(bot_factory, user_factory())
    second = create(bot_factory, user_factory())
    with django_capture_on_commit_callbacks(execute=True), inline_play():
        tournament_start(tournament_id=first.pk)
        tournament_start(tournament_id=second.pk)
    assert sent == []

    tournaments.backpressure.tournament_matches_dispatch()

    assert (in_flight(first), in_flight(second)) == (3, 3)


def test_the_watchdog_leaves_a_match_that_waits_for_a_slot_and_fills_free_slots(
    bot_factory, user_factory, quiet_turns, slots, sent, django_capture_on_commit_callbacks
):
    slots(tournament=2)
    tournament = create(bot_factory, user_factory())
    start(tournament, django_capture_on_commit_callbacks)
    waiting = TournamentMatch.objects.filter(tournament=tournament, dispatched_at=None)
    assert waiting.count() == 28
    # Two slots free up without a dispatch (say its process died before it sent one).
    TournamentMatch.objects.filter(pk__in=sent).update(status="finished")

    with django_capture_on_commit_callbacks(execute=True):
        tournaments_watchdog(stale_after=0)

    assert len(sent) == 4
    assert waiting.count() == 26
