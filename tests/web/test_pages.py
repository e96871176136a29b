"""The pages, rendered by the Django test client: what each one shows and selects."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from games.models import Match, Seat
from games.selectors import match_state
from tournaments.models import Tournament
from web.charts import rating_charts, sparkline
from web.demo import bot_match_play

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_home_shows_games_leaderboards_tournaments_and_recent_matches(client, demo):
    response = client.get("/")

    assert response.status_code == 200
    page = text(response)
    assert "Durak (Дурачки)" in page and "Volynshchik (Волынщик)" in page
    assert "Durak, 2 players" in page
    assert "Open ladder night" in page  # the running tournament
    last = demo.rated[-1]
    assert f'href="/matches/{last.pk}/"' in page


def test_leaderboard_lists_rank_owner_interval_games_loss_rate_and_trend(client, demo):
    response = client.get("/leaderboard/durak-2p/")

    assert response.status_code == 200
    page = text(response)
    rows = response.context["rows"]
    assert rows, "every bot with a rated match has a line"
    first = rows[0]["line"]
    assert first.rank == 1 and first.low <= first.rating <= first.high
    assert f'data-bot="{first.name}"' in page
    assert f"{first.low:.0f} – {first.high:.0f}" in page
    owners = {row["line"].name: row["owner"] for row in rows}
    assert owners.get("alice-greedy") == "alice"
    assert all(row["line"].games >= 1 for row in rows)
    assert 'class="spark' in page  # the trend line
    assert 'table class="data sortable"' in page


def test_leaderboard_of_an_unknown_pool_is_404(client, db):
    assert client.get("/leaderboard/chess/").status_code == 404


def test_leaderboard_index_redirects_to_the_first_pool(client, db):
    response = client.get("/leaderboard/")

    assert response.status_code == 302 and response.url == "/leaderboard/durak-2p/"


def test_bot_page_draws_the_rating_history_and_lists_matches_and_forfeits(client, demo):
    response = client.get("/bots/bob-random/")

    assert response.status_code == 200
    page = text(response)
    assert page.count('<svg class="chart"') == 2 and 'class="line"' in page
    assert "did not move within the time limit" in page  # the forfeit's reason
    assert response.context["forfeit_count"] == 1
    assert f'href="/matches/{demo.forfeited.pk}/"' in page


def test_bot_page_without_rated_matches_says_so(client, demo):
    response = client.get("/bots/strong/")

    assert response.status_code == 200
    assert "No rated matches yet" in text(response)


def test_bot_page_of_an_unknown_bot_is_404(client, db):
    assert client.get("/bots/nobody/").status_code == 404


def test_rating_charts_draw_elo_and_the_fits_with_their_intervals(demo):
    from tournaments.models import FitEntry
    from tournaments.selectors import bot_rating_history

    bot = demo.bots["greedy"]
    charts = rating_charts(bot_rating_history(bot.pk))

    elo, fit = str(charts["elo"]), str(charts["fit"])
    assert elo.count('class="line"') == 1 and 'data-series="durak-2p"' in elo
    fits = FitEntry.objects.filter(bot=bot).count()
    assert fits >= 2
    assert fit.count('class="interval"') == fits
    assert fit.count('class="band"') == 1


def test_sparkline_is_green_going_up_and_empty_without_history():
    assert 'class="spark up"' in str(sparkline([1000, 1010, 1020]))
    assert 'class="spark down"' in str(sparkline([1000, 990]))
    assert "<svg" not in str(sparkline([1000]))


def test_tournament_list_and_page_show_progress_standings_and_crosstable(client, demo):
    listing = client.get("/tournaments/")
    assert listing.status_code == 200
    assert "Demo cup" in text(listing) and "Open ladder night" in text(listing)

    finished = demo.tournament
    page = client.get(f"/tournaments/{finished.pk}/")
    assert page.status_code == 200
    body = text(page)
    assert f"{finished.matches_done} / {finished.matches_total}" in body
    assert 'id="crosstable"' in body and 'id="standings"' in body
    assert 'data-refresh=""' in body  # finished: nothing to refresh

    running = client.get(f"/tournaments/{demo.running.pk}/")
    assert 'data-refresh="5"' in text(running)
    partial = client.get(f"/tournaments/{demo.running.pk}/?partial=1")
    assert "<html" not in partial.content.decode() and "data-live" in text(partial)


def test_crosstable_rows_add_up_to_the_standings(client, demo):
    response = client.get(f"/tournaments/{demo.tournament.pk}/")

    for row in response.context["crosstable"]:
        points = sum(cell["score"] for cell in row["cells"] if cell is not None)
        assert points == pytest.approx(row["line"].points)


def test_tournament_list_filters_by_status(client, demo):
    response = client.get("/tournaments/?status=running")

    assert [t.name for t in response.context["page"]] == ["Open ladder night"]


def test_archive_lists_matches_newest_first_and_paginates(client, demo):
    response = client.get("/matches/")

    assert response.status_code == 200
    ids = [line.id for line in response.context["lines"]]
    assert ids == sorted(ids, reverse=True)
    assert response.context["page"].paginator.count == Match.objects.count()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("game=volynshchik", lambda m: m.game == "volynshchik"),
        ("bot=bob-random", lambda m: m.seats.filter(bot__name="bob-random").exists()),
        ("player=alice", lambda m: m.seats.filter(user__username="alice").exists()),
        ("result=forfeit", lambda m: m.forfeit_seat is not None),
        ("result=decided&game=durak", lambda m: m.loser is not None and m.game == "durak"),
        ("status=running", None),  # not a status: the form is invalid and nothing is filtered
    ],
)
def test_archive_filters_select_the_same_matches_as_the_api(client, demo, query, expected):
    response = client.get(f"/matches/?{query}")

    assert response.status_code == 200
    shown = {line.id for line in response.context["lines"]}
    if expected is None:
        assert len(shown) == min(Match.objects.count(), 25)
        return
    wanted = {m.pk for m in Match.objects.all() if expected(m)}
    assert shown == wanted and shown


def test_archive_filters_by_date(client, demo):
    from django.utils import timezone

    today = timezone.now().date().isoformat()

    assert client.get(f"/matches/?since={today}").context["page"].paginator.count > 0
    assert client.get("/matches/?until=2000-01-01").context["page"].paginator.count == 0


def test_archive_pages_keep_the_filters(client, demo, monkeypatch):
    import web.views

    monkeypatch.setattr(web.views, "ARCHIVE_PAGE_SIZE", 2)
    response = client.get("/matches/?game=durak")

    assert 'href="?game=durak&amp;page=2"' in response.content.decode()


def test_replay_page_configures_the_viewer_with_seats_and_the_api(client, demo):
    match = demo.rated[0]

    response = client.get(f"/matches/{match.pk}/?ply=3")

    assert response.status_code == 200
    config = json.loads(
        re.search(
            r'<script id="match-config" type="application/json">(.*?)</script>',
            response.content.decode(),
            re.S,
        ).group(1)
    )
    assert config["replay_url"] == f"/api/v1/matches/{match.pk}/replay/"
    assert config["start_ply"] == 3
    names = list(match.seats.order_by("index").values_list("bot__name", flat=True))
    assert [seat["name"] for seat in config["seats"]] == names
    assert f'href="/matches/{match.pk}/verify/"' in response.content.decode()


def test_replay_page_links_the_api_replay_as_a_download(client, demo):
    match = demo.rated[0]

    page = client.get(f"/matches/{match.pk}/").content.decode()

    assert (
        f'id="replay-download" href="/api/v1/matches/{match.pk}/replay/" '
        f'download="match-{match.pk}-replay.json"'
    ) in page


def test_replays_open_page_has_the_viewer_without_an_api_source(client, db):
    response = client.get("/replays/open/")

    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="replay-file"' in page and 'id="move-list"' in page
    assert "web/replay.js" in page and "web/replay_open.js" in page
    config = json.loads(
        re.search(r'<script id="match-config" type="application/json">(.*?)</script>', page, re.S)
        .group(1)
    )
    assert "replay_url" not in config


def test_replay_page_of_a_waiting_match_offers_a_seat(client, db, user):
    from games.seating import SeatHolder
    from games.services import match_create

    match = match_create(creator=user, game="durak", players=2, seats=[SeatHolder(user=user), None])

    response = client.get(f"/matches/{match.pk}/")

    assert response.status_code == 200
    assert "waiting for players" in text(response)
    assert "replay.js" not in text(response)


def test_verify_page_recomputes_the_deal(client, demo):
    match = demo.rated[0]

    response = client.get(f"/matches/{match.pk}/verify/")

    assert response.status_code == 200
    assert 'data-ok="true"' in response.content.decode()
    assert match.seed in text(response)


def test_play_pages_need_a_signed_in_person(client, demo):
    assert client.get("/play/").status_code == 302
    assert client.get("/play/").url.startswith("/accounts/login/")


def test_lobby_offers_the_builtin_bots_and_open_seats(client, demo, user_factory):
    from games.seating import SeatHolder
    from games.services import match_create

    host, guest = user_factory(), user_factory()
    waiting = match_create(
        creator=host, game="durak", players=2, seats=[SeatHolder(user=host), None]
    )
    client.force_login(guest)

    response = client.get("/play/")

    assert response.status_code == 200
    assert response.context["builtin_names"] == ["random", "greedy", "strong"]
    assert [line.id for line in response.context["open_lines"]] == [waiting.pk]


def test_play_page_is_for_seated_players_others_are_sent_to_the_replay(client, demo, user_factory):
    from games.seating import SeatHolder
    from games.services import match_create

    player, other = user_factory(), user_factory()
    match = match_create(
        creator=player,
        game="durak",
        players=2,
        seats=[SeatHolder(user=player), SeatHolder(bot=demo.bots["random"])],
    )
    client.force_login(player)
    assert client.get(f"/play/{match.pk}/").status_code == 200
    client.force_login(other)
    response = client.get(f"/play/{match.pk}/")
    assert response.status_code == 302 and response.url == f"/matches/{match.pk}/"


def test_signup_creates_the_account_and_signs_in(client, db):
    response = client.post("/accounts/signup/", {"username": "dana", "password": "a-long-pass-9"})

    assert response.status_code == 302 and response.url == "/play/"
    assert client.get("/play/").status_code == 200


def test_signup_refuses_a_weak_password_with_the_reason(client, db):
    response = client.post("/accounts/signup/", {"username": "dana", "password": "123"})

    assert response.status_code == 200
    assert "too short" in text(response)


def test_login_and_logout(client, user_factory):
    user_factory(username="erin", password="another-pass-7")

    response = client.post("/accounts/login/", {"username": "erin", "password": "another-pass-7"})
    assert response.status_code == 302 and response.url == "/play/"
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/play/").status_code == 302


def test_match_lines_name_the_fool_the_forfeit_and_the_draw(demo):
    from games.selectors import matches_for_listing
    from web.selectors import match_lines

    lines = {line.id: line for line in match_lines(matches_for_listing())}
    decided = next(m for m in demo.rated if m.loser is not None)
    fool = Seat.objects.get(match=decided, index=decided.loser).bot.name
    assert lines[decided.pk].outcome == f"{fool} is the fool"
    assert lines[demo.forfeited.pk].outcome == "bob-random forfeited (out of time)"
    assert lines[demo.forfeited.pk].seats[1].lost


def test_the_replay_data_is_the_engine_reveal_after_every_ply(client, demo):
    match = demo.rated[0]

    replay = client.get(reverse("match-replay", args=[match.pk])).json()

    assert len(replay["steps"]) == match.ply + 1
    last = replay["steps"][-1]["state"]
    final = match_state(Match.objects.get(pk=match.pk)).reveal()
    assert last["hands"] == final["hands"] and last["result"] == final["result"]


def test_demo_command_fills_every_page(db, celery_eager):
    from io import StringIO

    from django.core.management import call_command

    tournaments = Tournament.objects.count()
    rated = Match.objects.filter(rated=True, status="finished").count()

    call_command("arena_demo", "--matches", "2", stdout=StringIO())

    assert Tournament.objects.count() == tournaments + 2
    assert Match.objects.filter(rated=True, status="finished").count() == rated + 2


def test_bot_match_play_plays_to_the_end(demo):
    match = bot_match_play("durak", [demo.bots["random"], demo.bots["greedy"]])

    assert match.status == Match.Status.FINISHED and match.seed_revealed


def test_archive_counts_only_one_page_past_the_page_shown(client, demo, monkeypatch):
    from web import views

    monkeypatch.setattr(views, "ARCHIVE_PAGE_SIZE", 2)

    first = client.get("/matches/")
    second = client.get("/matches/?page=2")

    assert first.context["page"].paginator.count == 4 and "4+ matches" in text(first)
    assert "Page 1 of 2+" in text(first)
    assert second.context["page"].paginator.count == 6 and "Page 2 of 3+" in text(second)
    assert [line.id for line in second.context["lines"]] == list(
        Match.objects.order_by("-id").values_list("id", flat=True)[2:4]
    )


def test_archive_caps_its_count_and_says_so(client, demo, monkeypatch):
    from cardserver import pagination

    monkeypatch.setattr(pagination, "COUNT_CAP", 3)
    response = client.get("/matches/")

    assert response.context["page"].paginator.capped
    assert "3+ matches" in response.content.decode()
