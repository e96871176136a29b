"""A standalone replay (``cardkit replay FILE --out FILE.html``) plays from file:// in
Chromium, offline, with the site's viewer; and inside a notebook's iframe (srcdoc)."""

from __future__ import annotations

import pytest

from cardkit.arena import play_deal, write_replay
from cardkit.cli import main
from cardkit.replay import Replay
from cardkit.specs import BuiltinPlayer
from tests.web.conftest import SCREENSHOTS

pytestmark = pytest.mark.browser


@pytest.fixture
def offline_tab(browser):
    """A tab that may load file:// and about: only: any other request is refused and kept."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(15_000)
    requested: list[str] = []
    errors: list[str] = []

    def refuse(route):
        requested.append(route.request.url)
        route.abort()

    context.route("http*://**/*", refuse)
    tab = context.new_page()
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: m.type == "error" and errors.append(m.text))
    yield tab
    context.close()
    assert requested == [], requested
    assert errors == [], errors


def _deal(tmp_path):
    players = [BuiltinPlayer("greedy"), BuiltinPlayer("random"), BuiltinPlayer("strong")]
    deal = play_deal("durak", {"players": 3}, players, seating=(0, 1, 2), seed="standalone")
    assert deal.result["loser"] is not None
    return deal, players, write_replay(deal, tmp_path)


def test_the_standalone_html_plays_to_the_result_from_a_file_offline(offline_tab, tmp_path):
    deal, players, path = _deal(tmp_path)
    out = tmp_path / "deal.html"
    assert main(["replay", str(path), "--out", str(out)]) == 0
    moves, loser = len(deal.log), deal.result["loser"]

    offline_tab.goto(out.as_uri())
    offline_tab.wait_for_selector("#table .seat")
    assert offline_tab.inner_text("#ply-label") == "Start"
    offline_tab.click("#last")
    assert offline_tab.inner_text("#ply-label") == f"Move {moves} of {moves}"
    banner = offline_tab.locator("#result")
    assert f"Seat {loser} ({players[loser].name}) is the fool." in banner.inner_text()
    assert offline_tab.locator("#move-list li").count() == moves
    # The seats carry their names: no "Seat 0 · open".
    assert "open" not in offline_tab.locator("#table").inner_text()
    offline_tab.click("#first")
    offline_tab.keyboard.press("ArrowRight")
    assert offline_tab.inner_text("#ply-label") == f"Move 1 of {moves}"
    offline_tab.click("#last")
    # A file has no address to link a move to.
    assert offline_tab.locator("#permalink").is_hidden()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    offline_tab.screenshot(path=str(SCREENSHOTS / "replay-standalone.png"), full_page=True)


def test_a_replay_shows_itself_in_a_notebook_iframe(offline_tab, tmp_path):
    deal, _, path = _deal(tmp_path)

    offline_tab.set_content(Replay.from_file(path)._repr_html_())
    frame = offline_tab.frame_locator("iframe")
    frame.locator("#table .seat").first.wait_for()
    frame.locator("#last").click()

    moves = len(deal.log)
    assert frame.locator("#ply-label").inner_text() == f"Move {moves} of {moves}"
    assert "is the fool" in frame.locator("#result").inner_text()
