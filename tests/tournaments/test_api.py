"""The tournaments and ratings API, the pages and the admin."""

import pytest

from tournaments.models import RatingChange, Tournament
from tournaments.ratings import ratings_apply_pending, ratings_fit

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(user_factory):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user_factory(is_staff=True))
    return client


def test_create_and_start_through_the_api_shows_progress(
    staff_client, bot_factory, quiet_turns, celery_eager, django_capture_on_commit_callbacks
):
    a, b = bot_factory(), bot_factory()

    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            "/api/v1/tournaments/",
            {"name": "cup", "game": "durak", "bots": [a.name, b.name], "games_per_pairing": 2,
             "rated": True},
        )  # fmt: skip

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["entrants"] == [a.name, b.name]
    detail = staff_client.get(f"/api/v1/tournaments/{body['id']}/").json()
    assert detail["status"] == "finished"
    assert detail["progress"] == {"done": 2, "total": 2, "round": 0, "rounds": 1}


def test_standings_and_crosstable(staff_client, bot_factory, quiet_turns, celery_eager,
                                  django_capture_on_commit_callbacks):  # fmt: skip
    a, b = bot_factory(), bot_factory("greedy")
    with django_capture_on_commit_callbacks(execute=True):
        created = staff_client.post(
            "/api/v1/tournaments/",
            {"name": "cup", "game": "durak", "bots": [a.name, b.name], "games_per_pairing": 4,
             "duplicate": True},
        ).json()  # fmt: skip

    body = staff_client.get(f"/api/v1/tournaments/{created['id']}/standings/").json()

    assert sum(line["games"] for line in body["standings"]) == 8
    assert sum(line["points"] for line in body["standings"]) == 4
    row = body["crosstable"][0]
    assert row["cells"][0]["games"] == 4
    assert [deck["deck"] for deck in body["decks"]] == [0, 1]


def test_rated_tournaments_are_for_staff(user_api_client, bot_factory):
    a, b = bot_factory(), bot_factory()

    response = user_api_client.post(
        "/api/v1/tournaments/", {"name": "x", "game": "durak", "bots": [a.name, b.name],
                                 "rated": True},
    )  # fmt: skip

    assert response.status_code == 403


def test_invalid_tournament_answers_400_with_the_reason(user_api_client, bot_factory):
    a, b = bot_factory(), bot_factory()

    response = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "x", "game": "durak", "bots": [a.name, b.name, "nobody"], "start": False},
    )
    assert response.status_code == 400
    assert "no such bot: nobody" in str(response.json()["error"]["detail"])

    response = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "x", "game": "durak", "bots": [a.name, b.name], "games_per_pairing": 3},
    )
    assert response.status_code == 400
    assert "multiple of 2" in response.json()["error"]["message"]


def test_only_the_creator_or_staff_may_cancel(user_api_client, api_client, user_factory,
                                              bot_factory):  # fmt: skip
    a, b = bot_factory(), bot_factory()
    created = user_api_client.post(
        "/api/v1/tournaments/",
        {"name": "x", "game": "durak", "bots": [a.name, b.name], "start": False},
    ).json()
    api_client.force_authenticate(user_factory())

    assert api_client.post(f"/api/v1/tournaments/{created['id']}/cancel/").status_code == 403
    response = user_api_client.post(f"/api/v1/tournaments/{created['id']}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    again = user_api_client.post(f"/api/v1/tournaments/{created['id']}/start/")
    assert again.status_code == 400


def test_leaderboard_and_rating_history(api_client, bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    for _ in range(5):
        finished_match([a, b], loser=1)
    ratings_apply_pending()
    ratings_fit(pool="durak-2p", bootstraps=20)

    board = api_client.get("/api/v1/ratings/durak-2p/").json()

    assert board["matches"] == 5
    first = board["lines"][0]
    assert first["bot"] == a.name and first["rank"] == 1
    assert first["low"] <= first["rating"] <= first["high"]
    assert (first["games"], first["losses"], first["loss_rate"]) == (5, 0, 0.0)
    assert first["elo"] > 1500
    history = api_client.get(f"/api/v1/ratings/bots/{b.name}/").json()
    assert len(history["elo"]) == 5 and len(history["fits"]) == 1
    assert api_client.get("/api/v1/ratings/chess/").status_code == 404


def _history_pages(api_client, url: str) -> list[dict]:
    pages = []
    while url:
        response = api_client.get(url)
        assert response.status_code == 200, response.json()
        pages.append(response.json())
        url = pages[-1]["next"]
    return pages


def test_rating_history_pages_by_cursor_newest_first_each_change_and_fit_once(
    api_client, bot_factory, finished_match, monkeypatch
):
    from tournaments.views import RatingHistoryPagination

    monkeypatch.setattr(RatingHistoryPagination, "page_size", 2)
    a, b = bot_factory(), bot_factory()
    for number in range(5):
        finished_match([a, b], loser=number % 2)
        ratings_apply_pending()
        ratings_fit(pool="durak-2p", bootstraps=5)
    everything = list(
        RatingChange.objects.filter(bot=b).order_by("id").values_list("match_id", flat=True)
    )

    pages = _history_pages(api_client, f"/api/v1/ratings/bots/{b.name}/")

    assert [len(page["elo"]) for page in pages] == [2, 2, 1]
    newest = pages[0]["elo"]
    assert [point["match"] for point in newest] == everything[-2:]  # oldest first, as before
    matches = [point["match"] for page in reversed(pages) for point in page["elo"]]
    assert matches == everything
    fits = [fit["fitted_at"] for page in reversed(pages) for fit in page["fits"]]
    assert fits == sorted(fits) and len(set(fits)) == 5
    assert pages[0]["previous"] is None and pages[1]["previous"] is not None


def test_rating_history_refuses_a_cursor_it_did_not_make_with_400(api_client, bot_factory):
    bot = bot_factory()

    response = api_client.get(f"/api/v1/ratings/bots/{bot.name}/?cursor=bz14")

    assert response.status_code == 400
    assert "cursor" in response.json()["error"]["detail"]


def test_pages_show_progress_and_leaderboard(client, bot_factory, finished_match):
    a, b = bot_factory(), bot_factory()
    tournament = Tournament.objects.create(
        name="Autumn cup", game="durak", seed="s", matches_total=10, matches_done=4,
        status="running",
    )  # fmt: skip
    finished_match([a, b], loser=0)
    ratings_apply_pending()
    ratings_fit(pool="durak-2p", bootstraps=10)

    page = client.get(f"/tournaments/{tournament.pk}/")
    assert page.status_code == 200
    assert b"4 / 10" in page.content
    board = client.get("/leaderboard/durak-2p/")
    assert board.status_code == 200
    assert b.name.encode() in board.content


def test_admin_lists_tournaments_with_progress(admin_client, bot_factory):
    Tournament.objects.create(name="Cup", game="durak", seed="s", matches_total=8, matches_done=2)

    response = admin_client.get("/admin/tournaments/tournament/")

    assert response.status_code == 200
    assert b"2 / 8 (25%)" in response.content


def test_admin_adds_a_tournament_through_the_service(admin_client, bot_factory):
    a, b = bot_factory(), bot_factory()

    response = admin_client.post(
        "/admin/tournaments/tournament/add/",
        {"name": "Admin cup", "game": "durak", "players": 2, "deck_size": 36,
         "match_format": "deal", "format": "round_robin", "games_per_pairing": 2,
         "move_time_limit": 5, "bots": [a.pk, b.pk]},
    )  # fmt: skip

    assert response.status_code == 302
    tournament = Tournament.objects.get(name="Admin cup")
    assert tournament.matches_total == 2
    assert tournament.matches.count() == 2
