"""Bot versions: when one starts, the seats that record it, and ``bot@label``."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bots import services, versions
from bots.models import Bot, BotVersion
from games.models import Seat
from games.seating import SeatHolder
from games.services import match_create, match_join
from tests.bots.conftest import reply
from tests.matches import finished_bot_match, token_client
from tournaments.models import FitEntry, RatingFit
from tournaments.version_ratings import fit_against, version_ratings

pytestmark = pytest.mark.django_db


def pong_reporting(version: str | None):
    body = {"pong": True} | ({"version": version} if version is not None else {})

    def behaviour(handler, request) -> None:
        reply(handler, json.dumps(body).encode())

    return behaviour


def labels(bot: Bot) -> list[str]:
    return list(bot.versions.order_by("created_at", "id").values_list("label", flat=True))


def current(bot: Bot) -> str:
    bot.refresh_from_db()
    return bot.version.label


@pytest.fixture
def client_bot(user):
    bot, _ = services.bot_register(owner=user, name="cb", kind="client", games=["durak"])
    return bot


def test_a_registered_bot_starts_at_version_1(client_bot):
    assert labels(client_bot) == ["1"] and current(client_bot) == "1"


def test_an_http_bot_starts_at_the_version_its_first_ping_reports(user, http_bot):
    url, _ = http_bot(pong_reporting("2.4.0"))
    bot, _ = services.bot_register(owner=user, name="hb", kind="http", games=["durak"], url=url)
    assert labels(bot) == ["2.4.0"]


def test_the_owner_starts_a_version_through_the_api(user_api_client, client_bot):
    answer = user_api_client.post(
        "/api/v1/bots/cb/versions/", {"label": "v2"}, format="json"
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["name"] == "cb@v2" and answer.json()["current"] is True
    assert current(client_bot) == "v2"
    assert BotVersion.objects.get(bot=client_bot, label="v2").reason == "owner"


def test_a_patch_with_version_starts_one(user_api_client, client_bot):
    answer = user_api_client.patch("/api/v1/bots/cb/", {"version": "next"}, format="json")
    assert answer.status_code == 200 and answer.json()["version"] == "next"


@pytest.mark.parametrize("label", ["1", "has space", "a@b", ""])
def test_a_used_or_malformed_label_is_refused_and_changes_nothing(
    user_api_client, client_bot, label
):
    answer = user_api_client.post("/api/v1/bots/cb/versions/", {"label": label}, format="json")
    assert answer.status_code == 400
    assert labels(client_bot) == ["1"]


def test_only_the_owner_starts_a_version(client_bot, user_factory):
    stranger = token_client(user_factory())
    answer = stranger.post("/api/v1/bots/cb/versions/", {"label": "v9"}, format="json")
    assert answer.status_code == 403 and labels(client_bot) == ["1"]


def test_a_new_url_starts_a_numbered_version(user, http_bot):
    url, _ = http_bot(pong_reporting(None))
    bot, _ = services.bot_register(owner=user, name="hb", kind="http", games=["durak"], url=url)
    moved, _ = http_bot(pong_reporting(None))
    services.bot_update(bot_id=bot.pk, url=moved)
    assert labels(bot) == ["1", "2"]
    assert BotVersion.objects.get(bot=bot, label="2").url == moved


def test_a_ping_reporting_a_new_version_starts_it_and_an_old_one_returns_to_it(user, http_bot):
    answers = {"version": "a"}

    def behaviour(handler, request) -> None:
        reply(handler, json.dumps({"pong": True, **answers}).encode())

    url, _ = http_bot(behaviour)
    bot, _ = services.bot_register(owner=user, name="hb", kind="http", games=["durak"], url=url)
    services.bot_ping(bot_id=bot.pk)
    assert labels(bot) == ["a"]
    answers["version"] = "b"
    services.bot_ping(bot_id=bot.pk)
    assert labels(bot) == ["a", "b"] and current(bot) == "b"
    answers["version"] = "a"
    services.bot_ping(bot_id=bot.pk)
    assert labels(bot) == ["a", "b"] and current(bot) == "a"


def test_seats_record_the_version_for_every_kind_of_bot(user, http_bot, client_bot):
    builtin = services.builtin_bots_ensure()[0]
    url, _ = http_bot(pong_reporting("h1"))
    http, _ = services.bot_register(owner=user, name="hb", kind="http", games=["durak"], url=url)
    match = match_create(
        creator=user, game="durak", players=3,
        seats=[SeatHolder(bot=builtin), SeatHolder(bot=http), None], notify=False,
    )  # fmt: skip
    client_bot.refresh_from_db()
    match_join(match_id=match.pk, user=user, bot=client_bot)
    recorded = {
        seat.bot.name: seat.bot_version.label
        for seat in Seat.objects.filter(match=match).select_related("bot", "bot_version")
    }
    assert recorded == {builtin.name: "1", "hb": "h1", "cb": "1"}


def test_a_seat_taken_after_a_new_version_records_the_new_one(user, client_bot):
    versions.bot_version_start(bot_id=client_bot.pk, reason="owner", label="v2")
    client_bot.refresh_from_db()
    finished = match_create(
        creator=user, game="durak", players=2,
        seats=[SeatHolder(bot=client_bot), SeatHolder(user=user)], notify=False,
    )  # fmt: skip
    assert Seat.objects.get(match=finished, index=0).bot_version.label == "v2"


def test_bot_at_label_filters_the_archive_and_the_head_to_head(api_client, client_bot, user):
    other = services.builtin_bots_ensure()[1]
    client_bot.refresh_from_db()
    old = match_create(
        creator=user, game="durak", players=2,
        seats=[SeatHolder(bot=client_bot), SeatHolder(bot=other)], notify=False,
    )  # fmt: skip
    versions.bot_version_start(bot_id=client_bot.pk, reason="owner", label="v2")
    client_bot.refresh_from_db()
    new = finished_bot_match([client_bot, other], 1)
    listed = api_client.get("/api/v1/matches/?bot=cb@1").json()["results"]
    assert [m["id"] for m in listed] == [old.pk]
    listed = api_client.get("/api/v1/matches/?bot=cb@v2").json()["results"]
    assert [m["id"] for m in listed] == [new.pk]
    [row] = api_client.get("/api/v1/bots/cb@v2/opponents/").json()
    assert row["games"] == 1 and row["wins"] == 1
    assert api_client.get("/api/v1/bots/cb@v7/opponents/").status_code == 404


def test_versions_list_counts_each_versions_games_in_one_query(api_client, client_bot):
    other = services.builtin_bots_ensure()[1]
    client_bot.refresh_from_db()
    for loser in (0, 1, 1):
        finished_bot_match([client_bot, other], loser)
    with CaptureQueriesContext(connection) as queries:
        lines = versions.bot_version_lines(bot=client_bot)
    assert len(queries) == 1
    assert [(x["label"], x["games"], x["losses"]) for x in lines] == [("1", 3, 1)]
    answer = api_client.get("/api/v1/bots/cb/versions/").json()
    assert answer[0]["loss_rate"] == pytest.approx(1 / 3)


def test_a_version_fitted_against_equal_opponents_at_half_rates_as_they():
    even = fit_against("durak-2p", [(1000.0, 40, 20.0)])
    assert even.rating == pytest.approx(1000.0)
    assert even.low < 1000 < even.high
    better = fit_against("durak-2p", [(1000.0, 40, 30.0)])
    assert better.rating > even.high
    perfect = fit_against("durak-2p", [(1000.0, 5, 5.0)])
    assert math_finite(perfect.rating)


def math_finite(value: float) -> bool:
    return value == value and abs(value) < 1e6


def test_each_version_gets_its_own_fitted_rating(client_bot):
    other = services.builtin_bots_ensure()[1]
    client_bot.refresh_from_db()
    first = client_bot.version
    second = versions.bot_version_start(bot_id=client_bot.pk, reason="owner", label="v2")
    for version, loser in [(first, 0)] * 6 + [(second, 1)] * 6:
        finished_bot_match([client_bot, other], loser, rated=True, versions=[version, None])
    fit = RatingFit.objects.create(
        pool="durak-2p", matches=12, through_sequence=12, bootstraps=0, anchor_rating=1000
    )
    FitEntry.objects.create(fit=fit, bot=other, rank=1, rating=1000, low=950, high=1050,
                            games=12, losses=6, provisional=False)  # fmt: skip
    fitted = version_ratings(bot=client_bot)
    assert fitted[first.pk][0].rating < 1000 < fitted[second.pk][0].rating
    assert fitted[second.pk][0].games == 6
