"""/replays/open/: a replay file from the bot kit's local arena plays in the replay viewer."""

from __future__ import annotations

import json

import pytest

from cardkit.arena import play_deal, write_replay
from cardkit.specs import BuiltinPlayer

pytestmark = pytest.mark.browser


def test_a_local_arena_replay_file_plays_in_the_viewer(page, tmp_path):
    players = [BuiltinPlayer("greedy"), BuiltinPlayer("random"), BuiltinPlayer("strong")]
    deal = play_deal("durak", {"players": 3}, players, seating=(0, 1, 2), seed="browser")
    assert deal.result["loser"] is not None
    path = write_replay(deal, tmp_path)
    moves = len(deal.log)
    loser = deal.result["loser"]

    page.open("/replays/open/")
    assert page.page.locator("#viewer").is_hidden()
    page.page.set_input_files("#replay-file", str(path))
    page.page.wait_for_selector("#table .seat")
    assert page.page.inner_text("#ply-label") == "Start"
    assert page.page.locator("#table .seat").first.locator(".card").count() == 6
    page.page.click("body")
    page.page.keyboard.press("End")
    assert page.page.inner_text("#ply-label") == f"Move {moves} of {moves}"
    banner = page.page.locator("#result")
    assert banner.get_attribute("data-loser") == str(loser)
    assert f"Seat {loser} ({players[loser].name}) is the fool." in banner.inner_text()
    assert page.page.locator("#move-list li").count() == moves
    page.screenshot("replay-open")


def test_a_file_that_is_not_a_replay_is_refused_with_a_message(page):
    page.open("/replays/open/")
    page.page.evaluate(
        """(text) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([text], "notes.json", { type: "application/json" }));
            const zone = document.getElementById("drop-zone");
            zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true }));
        }""",
        json.dumps({"hello": "world"}),
    )
    status = page.page.locator("#replay-file-status[data-state=error]")
    status.wait_for()
    assert "notes.json could not be opened: this is not a replay" in status.inner_text()
    assert page.page.locator("#viewer").is_hidden()
