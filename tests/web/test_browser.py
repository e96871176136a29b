"""Browser tests: headless Chromium on the live server, through Playwright.

Each test fails on any JavaScript error the page logs (see ``conftest.BrowserPage``) and
saves a screenshot of what it looked at under ``artefacts/screenshots/``.
"""

from __future__ import annotations

import re

import pytest

from games.models import Match, Move
from games.selectors import match_initial_state

pytestmark = pytest.mark.browser


def engine_result(match: Match) -> dict:
    """Replay the match's log on the engine, independently of the page and the API."""
    state = match_initial_state(match)
    for move in Move.objects.filter(match=match).order_by("ply").values_list("move", flat=True):
        state = state.play(move)
    assert state.is_over
    return state.result


def test_leaderboard_sorts_by_a_column(page, live_demo):
    page.open("/leaderboard/durak-2p/")
    rows = page.page.locator("#leaderboard tbody tr")
    assert rows.count() == 4  # random, greedy, alice-greedy, bob-random all played
    page.screenshot("leaderboard")

    page.page.click("#leaderboard th:has-text('Games')")
    games = [
        int(n) for n in page.page.locator("#leaderboard tbody td:nth-child(7)").all_inner_texts()
    ]
    assert games == sorted(games)
    page.page.click("#leaderboard th:has-text('Games')")
    games = [
        int(n) for n in page.page.locator("#leaderboard tbody td:nth-child(7)").all_inner_texts()
    ]
    assert games == sorted(games, reverse=True)

    page.page.click("#leaderboard tbody tr:first-child a.bot-link")
    page.page.wait_for_url(re.compile(r".*/bots/[^/]+/$"))


def test_bot_page_shows_its_rating_chart(page, phone, live_demo):
    page.open("/bots/greedy/")
    charts = page.page.locator("#rating-history svg.chart")
    assert charts.count() == 2  # the fitted rating and the Elo
    chart = charts.first
    assert chart.is_visible()
    assert chart.locator("path.line").count() == 1
    assert chart.locator(".interval").count() >= 1
    box = chart.bounding_box()
    assert box["width"] > 300 and box["height"] > 100
    page.screenshot("bot")

    phone.open("/bots/greedy/")
    assert phone.page.locator("#rating-history svg.chart").first.is_visible()
    phone.screenshot("bot-phone")


def test_archive_filters_by_game_and_bot(page, live_demo):
    from web.demo import bot_match_play

    bots = live_demo.bots
    bot_match_play("volynshchik", [bots["bob-random"], bots["random"]])
    page.open("/matches/")
    assert page.page.locator("#archive-results tbody tr").count() == Match.objects.count()

    page.page.select_option("#id_game", "durak")
    page.page.fill("#id_bot", "bob-random")
    page.page.click("#archive-filter button[type=submit]")
    page.page.wait_for_url(re.compile(r".*game=durak.*bot=bob-random"))
    rows = page.page.locator("#archive-results tbody tr[data-match]")
    wanted = Match.objects.filter(game="durak", seats__bot__name="bob-random").distinct()
    assert rows.count() == wanted.count() > 0
    shown = {int(row.get_attribute("data-match")) for row in rows.all()}
    assert shown == {m.pk for m in wanted}
    for row in rows.all_inner_texts():
        assert "bob-random" in row
    page.screenshot("archive")


def test_replay_steps_to_the_last_ply_and_shows_the_engine_result(page, phone, live_demo):
    match = next(m for m in live_demo.rated if m.loser is not None)
    result = engine_result(match)

    page.open(f"/matches/{match.pk}/")
    page.page.wait_for_selector("#table .seat")
    assert page.page.inner_text("#ply-label") == "Start"
    hands = page.page.locator("#table .seat").first.locator(".card")
    assert hands.count() == 6  # every hand is shown in a replay
    page.page.click("#next")
    assert page.page.inner_text("#ply-label") == f"Move 1 of {match.ply}"
    page.page.click("body")
    for _ in range(match.ply - 1):
        page.page.keyboard.press("ArrowRight")
    assert page.page.inner_text("#ply-label") == f"Move {match.ply} of {match.ply}"
    assert page.page.locator("#next").is_disabled()
    banner = page.page.locator("#result")
    assert banner.is_visible()
    assert banner.get_attribute("data-loser") == str(result["loser"])
    loser_name = match.seats.get(index=result["loser"]).bot.name
    assert f"Seat {result['loser']} ({loser_name}) is the fool." in banner.inner_text()
    assert f"ply={match.ply}" in page.page.url
    page.screenshot("replay-end")

    page.page.keyboard.press("Home")
    assert page.page.inner_text("#ply-label") == "Start"
    page.page.locator("#slider").fill("5")
    assert page.page.inner_text("#ply-label") == f"Move 5 of {match.ply}"
    words = page.page.inner_text("#move-words")
    assert words.startswith("seat ") and any(
        verb in words for verb in ("attacks with", "covers", "takes")
    )

    # Autoplay moves on by itself until paused.
    page.page.keyboard.press("Home")
    page.page.select_option("#speed", "300")
    page.page.click("#play")
    page.page.wait_for_function(
        "document.getElementById('ply-label').textContent.startsWith('Move 2')"
    )
    page.page.click("#play")  # pause
    label = page.page.inner_text("#ply-label")
    page.page.wait_for_timeout(400)
    assert page.page.inner_text("#ply-label") == label

    # A link can point at a ply; the seed's verification is one click away.
    phone.open(f"/matches/{match.pk}/?ply=7")
    phone.page.wait_for_selector("#table .seat")
    assert phone.page.inner_text("#ply-label") == f"Move 7 of {match.ply}"
    phone.screenshot("replay-phone")
    phone.page.click("#verify-link")
    phone.page.wait_for_selector("#verification[data-ok=true]")


def test_volynshchik_replay_draws_the_pile_and_reserves(page, live_demo):
    from web.demo import bot_match_play

    bots = live_demo.bots
    match = bot_match_play("volynshchik", [bots["greedy"], bots["random"], bots["bob-random"]])
    page.open(f"/matches/{match.pk}/?ply=1")
    page.page.wait_for_selector("#table .seat")
    assert page.page.locator("#table .pile .card").count() == 1
    assert page.page.locator("#table .reserve .card").count() == 3
    assert "leads" in page.page.inner_text("#move-words")
    page.screenshot("replay-volynshchik")


def wait_for_the_move(tab, ply: str) -> None:
    """Wait until the table shows a ply after ``ply``, or the end of the match."""
    tab.page.wait_for_function(
        "ply => { const t = document.getElementById('table');"
        " return t.dataset.ply !== ply || t.dataset.state === 'finished'; }",
        arg=ply,
    )


def play_durak_deal(tab) -> None:
    """Play the signed-in person's seat to the end: always the first card offered."""
    table = tab.page.locator("#table")
    for _ in range(400):
        tab.page.wait_for_selector("#table[data-state='your-turn'], #table[data-state='finished']")
        if table.get_attribute("data-state") == "finished":
            return
        ply = table.get_attribute("data-ply")
        beat = tab.page.locator("#buttons button:has-text('Beat')")
        if beat.count():
            # Defend: cover the attack cards one by one while a card can; else take.
            while not beat.is_enabled():
                playable = tab.page.locator("#my-hand button.card.playable")
                if not playable.count():
                    break
                playable.first.click()
            if beat.is_enabled():
                beat.click()
            else:
                tab.page.click("#buttons button:has-text('Take')")
        else:
            tab.page.locator("#my-hand button.card.playable").first.click()
            tab.page.click("#buttons button:has-text('Attack')")
        wait_for_the_move(tab, ply)
    raise AssertionError("the deal did not end in 400 moves")


def play_volynshchik_deal(tab) -> None:
    """Play the signed-in person's seat to the end, declaring whenever that is offered,
    else the first card offered, else taking."""
    table = tab.page.locator("#table")
    for _ in range(600):
        tab.page.wait_for_selector("#table[data-state='your-turn'], #table[data-state='finished']")
        if table.get_attribute("data-state") == "finished":
            return
        ply = table.get_attribute("data-ply")
        declare = tab.page.locator("#buttons button:has-text('Declare')")
        playable = tab.page.locator("#my-hand button.card.playable")
        if declare.count():
            declare.click()
        elif playable.count():
            playable.first.click()
        else:
            tab.page.click("#buttons button:has-text('Take')")
        wait_for_the_move(tab, ply)
    raise AssertionError("the deal did not end in 600 moves")


def sign_in_to_play(tab, user_factory) -> None:
    """Sign a new person in through the login form and land on the play lobby."""
    from bots.services import builtin_bots_ensure

    builtin_bots_ensure()
    user_factory(username="player", password="play-it-safe-42")
    tab.open("/accounts/login/?next=/play/")
    tab.page.fill("#id_username", "player")
    tab.page.fill("#id_password", "play-it-safe-42")
    tab.page.click("#login-form button[type=submit]")
    tab.page.wait_for_url(re.compile(r".*/play/$"))


def test_play_a_two_player_durak_deal_against_random(page, phone, user_factory, live_server):
    sign_in_to_play(page, user_factory)
    page.screenshot("play-lobby")

    assert page.page.input_value("#players") == "2"
    assert page.page.input_value("select[name=seat1]") == "bot:random"
    page.page.click("#start-match")
    page.page.wait_for_url(re.compile(r".*/play/\d+/$"))
    match = Match.objects.get(seats__user__username="player")
    page.page.wait_for_selector("#table[data-state]")
    # The bot's hand is face down (it may have attacked already).
    held = int(page.page.inner_text("#table .seat:not(.me) .count").split()[0])
    assert 1 <= held <= 6
    assert page.page.locator("#table .seat:not(.me) .card.back").count() == held
    assert page.page.locator("#table .seat:not(.me) .card:not(.back)").count() == 0
    assert page.page.locator("#my-hand .card").count() == 6
    page.screenshot("play-start")
    page.page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot("play-phone")
    page.page.set_viewport_size({"width": 1280, "height": 900})

    play_durak_deal(page)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.result == engine_result(match)
    banner = page.page.locator("#result")
    assert banner.is_visible()
    assert banner.get_attribute("data-loser") == ("" if match.loser is None else str(match.loser))
    expected = "Drawn" if match.loser is None else "You lost" if match.loser == 0 else "You won"
    assert expected in banner.inner_text()
    # The person's own moves are told as "you", the bot's by its seat and name.
    log = [re.sub(r"^\d+", "", line) for line in page.page.locator("#history li").all_inner_texts()]
    assert any(line.startswith("you ") for line in log), log
    assert not any(line.startswith("seat 0 ") for line in log), log
    page.screenshot("play-end")

    # The same match, seen on a phone, once it is over.
    phone.page.context.add_cookies(page.page.context.cookies())
    phone.open(f"/matches/{match.pk}/?ply={match.ply}")
    phone.page.wait_for_selector("#result:not([hidden])")
    phone.screenshot("play-replay-phone")


def test_play_a_three_player_volynshchik_deal_against_random(page, user_factory, live_server):
    sign_in_to_play(page, user_factory)
    page.page.check("input[name=game][value=volynshchik]")
    page.page.select_option("#players", "3")
    assert page.page.input_value("select[name=seat2]") == "bot:random"
    page.page.click("#start-match")
    page.page.wait_for_url(re.compile(r".*/play/\d+/$"))
    match = Match.objects.get(seats__user__username="player")
    assert (match.game, match.players) == ("volynshchik", 3)
    page.page.wait_for_selector("#table[data-state]")
    page.screenshot("play-volynshchik-start")

    play_volynshchik_deal(page)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.result == engine_result(match)
    assert page.page.locator("#result").get_attribute("data-loser") == (
        "" if match.loser is None else str(match.loser)
    )
    page.screenshot("play-volynshchik-end")


def test_spectators_follow_a_match_in_play_without_seeing_hands(page, user_factory):
    from bots.services import builtin_bots_ensure
    from games.move_services import match_move_submit
    from games.seating import SeatHolder
    from games.selectors import match_state
    from games.services import match_create

    random_bot = next(bot for bot in builtin_bots_ensure() if bot.name == "random")
    person = user_factory(username="watched")
    match = match_create(
        creator=person,
        game="durak",
        players=2,
        seats=[SeatHolder(user=person), SeatHolder(bot=random_bot)],
    )
    match.refresh_from_db()
    assert match.to_move == 0  # the bot moved at once if it attacks first

    page.open(f"/matches/{match.pk}/")
    page.page.wait_for_selector("#table .seat")
    assert page.page.inner_text("#ply-label").startswith("Live · ")
    assert page.page.locator("#table .seat .card:not(.back)").count() == 0  # hands hidden
    ply = match.ply
    state = match_state(match)
    match_move_submit(match_id=match.pk, seat=0, ply=ply, move=state.legal_moves()[0])

    page.page.wait_for_function(
        "ply => { const m = document.getElementById('ply-label').textContent.match(/of (\\d+)/);"
        " return m !== null && Number(m[1]) > ply; }",
        arg=ply,
    )
    assert "seat 0 (watched)" in page.page.inner_text("#move-list")
    page.screenshot("spectator")


def test_the_replay_viewer_follows_a_live_match_through_its_event_stream(page, user_factory):
    import random

    from games.move_services import match_move_submit
    from games.selectors import match_state
    from tests.matches import start_match

    match = start_match([user_factory(username="east"), user_factory(username="west")])
    requests = []
    page.page.on("request", lambda r: requests.append((r.resource_type, r.url)))
    page.open(f"/matches/{match.pk}/")
    page.page.wait_for_selector("#table .seat")
    rng = random.Random(7)
    for _ in range(3):
        match.refresh_from_db()
        move = rng.choice(match_state(match).legal_moves())
        match_move_submit(match_id=match.pk, seat=match.to_move, ply=match.ply, move=move)
        page.page.wait_for_function(
            "ply => { const m = document.getElementById('ply-label').textContent"
            ".match(/of (\\d+)/); return m !== null && Number(m[1]) >= ply; }",
            arg=match.ply + 1,
        )
    streams = [url for kind, url in requests if "/stream/" in url]
    assert streams and all(kind == "eventsource" for kind, url in requests if url in streams)
    assert len(streams) == 1, "one stream followed every move (no reconnects)"
    assert not [url for _, url in requests if "/wait/" in url]


def test_pages_render_on_a_phone_without_errors(phone, live_demo):
    for path, name in [
        ("/", "home-phone"),
        ("/leaderboard/durak-2p/", "leaderboard-phone"),
        ("/matches/", "archive-phone"),
        ("/tournaments/", "tournaments-phone"),
    ]:
        phone.open(path)
        width = phone.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width} px wide on a 390 px screen"
        phone.screenshot(name)


def test_home_and_tournament_pages(page, live_demo, celery_eager):
    from web.demo import _tournament_played

    bots = live_demo.bots
    tournament = _tournament_played("Browser cup", [bots["random"], bots["greedy"]])
    page.open("/")
    page.screenshot("home")
    page.open(f"/tournaments/{tournament.pk}/")
    assert page.page.locator("#crosstable tbody tr").count() == 2
    assert (
        page.page.inner_text("#progress")
        == f"{tournament.matches_done} / {tournament.matches_total}"
    )
    page.screenshot("tournament")


@pytest.mark.parametrize("path", ["/api/v1/redoc/", "/api/v1/docs/"])
def test_api_docs_load_nothing_from_another_site(page, live_server, path):
    """ReDoc's bundle asks for Redocly's logo on its CDN; the page's policy blocks it."""
    answered: list[str] = []
    blocked: list[tuple[str, str]] = []
    page.page.on("response", lambda response: answered.append(response.url))
    page.page.on(
        "requestfailed", lambda request: blocked.append((request.url, request.failure or ""))
    )
    # The browser logs the refusal, whenever it comes; that refusal is the point.
    page.expected_errors.append("Content Security Policy")

    page.open(path)
    page.page.wait_for_selector(".api-content, .swagger-ui .info", timeout=30_000)

    assert answered, "the page loaded nothing at all"
    here = (live_server.url, "blob:" + live_server.url, "data:")
    assert [url for url in answered if not url.startswith(here)] == []
    assert [(url, why) for url, why in blocked if "csp" not in why] == []


def test_a_person_who_resigns_is_told_so_in_words(page, user_factory, live_server):
    sign_in_to_play(page, user_factory)
    page.page.click("#start-match")
    page.page.wait_for_url(re.compile(r".*/play/\d+/$"))
    page.page.wait_for_selector("#resign:not([hidden])")
    page.page.once("dialog", lambda dialog: dialog.accept())

    page.page.click("#resign")

    banner = page.page.locator("#result:not([hidden])")
    banner.wait_for()
    assert banner.inner_text().startswith("You resigned: the match is lost.")
    assert Match.objects.get(seats__user__username="player").end_reason == "resign"
    page.screenshot("play-resigned")


def test_a_beaten_attack_leaves_the_table_for_the_discard(page, live_demo):
    beat = next(
        move
        for match in live_demo.rated
        for move in Move.objects.filter(match=match).order_by("ply")
        if move.move["type"] == "beat"
    )
    covered = 2 * len(beat.move["covers"])

    page.open(f"/matches/{beat.match_id}/?ply={beat.ply + 1}")
    page.page.wait_for_selector("#table .seat")

    assert page.page.locator("#table .table-cards .pair").count() == 0
    assert page.page.inner_text("#table .beaten-note") == f"beaten: {covered} cards to the discard"
    discard = page.page.inner_text("#table .discard")
    assert int(discard.split()[-2]) >= covered  # "N cards" under the discard's stack
    page.screenshot("replay-after-beat")
