"""The bot author's pages in Chromium at 390x844 and 1366x800: signed in through the
form, each page fits the screen's width; screenshots under artefacts/screenshots/."""

from __future__ import annotations

import re
import threading

import pytest

from tests.web.conftest import _browser_page

pytestmark = pytest.mark.browser

SIZES = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 800}}


@pytest.fixture(params=sorted(SIZES))
def tab(request, browser, live_server, celery_eager):
    gen = _browser_page(browser, live_server, SIZES[request.param])
    opened = next(gen)
    opened.size = request.param
    yield opened
    next(gen, None)


@pytest.fixture
def author_world(transactional_db, user_factory):
    """An author with an HTTP bot that played a deal (its calls made to the kit's server
    on 127.0.0.1), a client bot, and an HTTP bot the arena paused as unhealthy."""
    from bots import play_to_end, services
    from bots.models import Bot
    from cardkit import make_server
    from games.seating import SeatHolder
    from games.services import match_create

    author = user_factory(username="ada", password="write-bots-42", email="ada@example.org")
    server = make_server(lambda view, legal: legal[-1], 0, "s3cret")
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    bot = Bot.objects.create(
        name="ada-durak", owner=author, kind="http", url=url, secret="s3cret",
        games=["durak"], description="Plays its last legal move.",
    )  # fmt: skip
    services.versions.bot_version_first(bot=bot)
    match = match_create(
        creator=author, game="durak", players=2, notify=False,
        seats=[SeatHolder(bot=bot), SeatHolder(bot=services.builtin_bots_ensure()[1])],
    )  # fmt: skip
    play_to_end.match_play_to_end(match_id=match.pk)
    Bot.objects.create(name="ada-client", owner=author, kind="client", games=["volynshchik"])
    sick = Bot.objects.create(
        name="ada-flaky", owner=author, kind="http", url="http://127.0.0.1:1/", secret="x",
        games=["durak"],
    )  # fmt: skip
    for _ in range(3):
        services.bot_health_record(bot_id=sick.pk, ok=False, reason="timeout (no answer in 5 s)")
    yield {"match": match}
    server.shutdown()
    server.server_close()


def sign_in(tab) -> None:
    tab.open("/accounts/login/?next=/me/bots/")
    tab.page.fill("#id_username", "ada")
    tab.page.fill("#id_password", "write-bots-42")
    tab.page.click("#login-form button[type=submit]")
    tab.page.wait_for_url(re.compile(r".*/me/bots/$"))


def fits(tab, path: str, shot: str) -> None:
    """Save the page's screenshot, then assert it is no wider than the screen."""
    tab.screenshot(f"author-{shot}-{tab.size}")
    width = tab.page.evaluate("document.documentElement.scrollWidth")
    screen = SIZES[tab.size]["width"]
    assert width <= screen, f"{path} is {width} px wide on a {screen} px screen"


def test_the_authors_pages_fit_and_work_at_both_sizes(tab, author_world):
    match = author_world["match"]
    sign_in(tab)
    fits(tab, "/me/bots/", "my-bots")
    assert tab.page.locator(".item-list .bot-link").count() == 3

    tab.open("/me/bots/ada-flaky/")
    fits(tab, "/me/bots/ada-flaky/", "paused-bot")
    notice = tab.page.inner_text(".notice-arena")
    assert "timeout (no answer in 5 s)" in notice and "since" in notice

    tab.open("/me/bots/ada-durak/")
    fits(tab, "/me/bots/ada-durak/", "my-bot")
    tab.page.click(f"a[href='/me/bots/ada-durak/matches/{match.pk}/calls/']")
    tab.page.wait_for_url(re.compile(r".*/calls/$"))
    fits(tab, "calls", "call-log")
    rows = tab.page.locator("table.stack-table tbody tr")
    assert rows.count() >= 1
    assert re.search(r"\d+(\.\d)? ms", rows.first.inner_text())

    tab.open("/me/tokens/")
    tab.page.fill("#id_name", "laptop")
    tab.page.click("form.inline-form button[type=submit]")
    tab.page.wait_for_selector("#new-token")
    assert tab.page.inner_text("#new-token").startswith("cat_")
    fits(tab, "/me/tokens/", "tokens")

    tab.open("/me/bots/ada-durak/")
    tab.page.click("form[action$='/rotate/'] button")
    tab.page.wait_for_selector("#credential")
    assert tab.page.inner_text("#credential") != "s3cret"
    fits(tab, "rotate", "new-secret")

    tab.open("/users/ada/")
    fits(tab, "/users/ada/", "profile")
    assert tab.page.locator(".bot-link").count() == 3
