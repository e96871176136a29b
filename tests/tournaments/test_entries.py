"""Who may enter a bot in a tournament: its owner, or the arena (staff, commands)."""

import pytest

from bots.models import Bot
from tournaments.creation import TournamentError, tournament_create
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db


def _http_bot(owner, name: str) -> Bot:
    return Bot.objects.create(
        name=name, owner=owner, kind=Bot.Kind.HTTP, url="http://127.0.0.1:9/",
        games=["durak"],
    )  # fmt: skip


def test_someone_elses_bot_cannot_be_entered_in_an_unrated_tournament(
    user, user_api_client, user_factory, bot_factory
):
    theirs = _http_bot(user_factory(), "theirs")

    response = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "x", "game": "durak", "bots": [theirs.name, bot_factory().name],
         "rated": False, "start": False, "move_time_limit": 0.1},
    )  # fmt: skip

    assert response.status_code == 400, response.json()
    assert "not theirs" in str(response.json()["error"]["detail"])
    assert not Tournament.objects.exists()


def test_own_and_builtin_bots_may_be_entered(user, user_api_client, bot_factory):
    mine = _http_bot(user, "mine")

    response = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "x", "game": "durak", "bots": [mine.name, bot_factory().name],
         "rated": False, "start": False},
    )  # fmt: skip

    assert response.status_code == 201, response.json()


def test_the_arena_enters_anyones_bot(user_factory, bot_factory):
    theirs = _http_bot(user_factory(), "theirs")

    for creator in (None, user_factory(is_staff=True)):
        tournament = tournament_create(
            creator=creator, name="cup", game="durak", players=2,
            bots=[theirs, bot_factory()], rated=False,
        )  # fmt: skip
        assert tournament.entries.count() == 2


def test_the_service_refuses_a_non_staff_creator_the_same_way(user_factory, bot_factory):
    theirs = _http_bot(user_factory(), "theirs")

    with pytest.raises(TournamentError, match="only your own bots"):
        tournament_create(
            creator=user_factory(), name="cup", game="durak", players=2,
            bots=[theirs, bot_factory()], rated=False,
        )  # fmt: skip
