"""The client-mode runner of the bot kit plays a client bot's matches through the REST API."""

from __future__ import annotations

import threading

import pytest

from bots import services
from cardkit.client import ClientBot, RunnerError
from cardkit.serve import load_strategy
from games.models import Match, Move
from games.seating import SeatHolder
from games.services import match_create
from games.verification import match_verification


def seat_client_bot(user, game: str, players: int, count: int = 1):
    """Return ``(token, matches)``: a client bot seated at 0 in ``count`` new matches
    against built-in bots."""
    builtin = {bot.name: bot for bot in services.builtin_bots_ensure()}
    bot, token = services.bot_register(
        owner=user, name="clienty", kind="client", games=["durak", "volynshchik"]
    )
    opponents = [SeatHolder(bot=builtin["greedy"]), SeatHolder(bot=builtin["random"])]
    opponents = opponents[: players - 1]
    matches = [
        match_create(
            creator=user,
            game=game,
            players=players,
            seats=[SeatHolder(bot=bot), *opponents],
            move_time_limit=30,
        )
        for _ in range(count)
    ]
    return token, matches


def assert_played_to_the_end(match: Match) -> None:
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.forfeit_seat is None, match.forfeit_reason
    assert Move.objects.filter(match=match, seat=0).exists()
    assert match_verification(match).ok


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("game", "players"), [("durak", 2), ("volynshchik", 3)])
def test_client_bot_runner_plays_a_match_to_the_end(
    live_server, user, celery_eager, game, players
):
    token, (match,) = seat_client_bot(user, game, players)
    runner = ClientBot(live_server.url, token, load_strategy("greedy", seed=1))

    assert runner.whoami() == "clienty"
    runner.name = "clienty"
    assert runner.active_matches() == [match.pk]
    last = runner.play_match(match.pk)
    runner.stop()

    assert last["status"] == "finished"
    assert_played_to_the_end(match)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_client_bot_runner_finds_and_plays_all_its_matches(live_server, user, celery_eager):
    token, matches = seat_client_bot(user, "durak", 2, count=3)
    runner = ClientBot(live_server.url, token, load_strategy("random", seed=2))
    ids = {match.pk for match in matches}
    thread = threading.Thread(
        target=runner.run, kwargs={"until": lambda: ids <= set(runner.finished)}
    )

    thread.start()
    thread.join(60)
    runner.stop()

    assert not thread.is_alive(), "the runner did not finish its matches"
    assert runner.name == "clienty"
    for match in matches:
        assert_played_to_the_end(match)


@pytest.mark.django_db(transaction=True)
def test_token_of_no_client_bot_is_refused_by_the_runner(live_server, user):
    from accounts.tokens import token_create

    runner = ClientBot(live_server.url, token_create(user=user)[1], lambda v, m: m[0])

    with pytest.raises(RunnerError, match="belongs to no client bot"):
        runner.run()
