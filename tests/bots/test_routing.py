"""Interactive play's tasks take a queue of their own; batch work's never do."""

import pytest

from bots.services import builtin_bots_ensure
from cardserver.celery import app, settings_override
from games.seating import SeatHolder
from games.services import match_create

pytestmark = pytest.mark.django_db


def queue_of(name: str, *args) -> str:
    """The queue Celery's router (``CELERY_TASK_ROUTES``) sends this task to."""
    options = app.amqp.router.route({}, name, args, {})
    return options["queue"].name


@pytest.fixture
def bot_factory(db):
    """Return ``bot_factory(name)``: the built-in bot of that name."""
    bots = {bot.name: bot for bot in builtin_bots_ensure()}
    return bots.__getitem__


@pytest.fixture
def person_vs_bot(user_factory, bot_factory):
    person = user_factory()
    return match_create(
        creator=person, game="durak", players=2,
        seats=[SeatHolder(user=person), SeatHolder(bot=bot_factory("greedy"))],
    )  # fmt: skip


@pytest.mark.parametrize(
    "task",
    [
        "bots.tasks.match_turn_started",
        "bots.tasks.play_bot_turns",
        "games.tasks.enforce_move_deadline",
    ],
)
def test_a_match_a_person_waits_on_sends_its_bot_turns_to_the_interactive_queue(
    person_vs_bot, task
):
    assert queue_of(task, person_vs_bot.pk, 0) == "interactive"


def test_an_http_bots_call_dispatch_of_such_a_match_takes_the_interactive_queue(person_vs_bot):
    call = {"match_id": person_vs_bot.pk, "ply": 0, "owner_id": 1}

    assert queue_of("bots.tasks.bot_call_dispatch", call) == "interactive"


def test_a_challenge_between_bots_is_interactive(user_factory, bot_factory):
    challenger = user_factory()
    match = match_create(
        creator=challenger, game="durak", players=2,
        seats=[SeatHolder(bot=bot_factory("greedy")), SeatHolder(bot=bot_factory("random"))],
    )  # fmt: skip

    assert queue_of("bots.tasks.play_bot_turns", match.pk) == "interactive"


def test_batch_work_keeps_the_default_queue(bot_factory):
    # As the tournament, ladder and sequential tasks create their matches.
    match = match_create(
        creator=None, game="durak", players=2, notify=False, by_arena=True,
        seats=[SeatHolder(bot=bot_factory("greedy")), SeatHolder(bot=bot_factory("random"))],
    )  # fmt: skip

    assert match.batch
    assert queue_of("bots.tasks.play_bot_turns", match.pk) == "celery"
    assert queue_of("tournaments.tasks.play_tournament_match", 1) == "celery"


def test_a_queue_of_a_tests_own_gets_an_interactive_queue_of_its_own(person_vs_bot):
    with settings_override(task_default_queue="test-own"):
        assert queue_of("bots.tasks.play_bot_turns", person_vs_bot.pk) == "test-own-interactive"


def test_no_interactive_queue_when_it_is_turned_off(person_vs_bot, settings):
    settings.INTERACTIVE_QUEUE = ""

    assert queue_of("bots.tasks.play_bot_turns", person_vs_bot.pk) == "celery"
