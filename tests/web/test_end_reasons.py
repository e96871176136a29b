"""End reasons on the pages: the engine's EndReason is their one list, each has words, and
the pages' scripts get both from the server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cardkit.engine import EndReason
from web.end_reasons import END_REASON_WORDS, end_reason_words

STATIC = Path(__file__).resolve().parents[2] / "web" / "static" / "web"


def test_every_engine_end_reason_has_words():
    assert set(END_REASON_WORDS) == set(EndReason)
    assert all(END_REASON_WORDS.values())


def test_forfeit_codes_have_words_or_read_as_their_code():
    assert end_reason_words("timeout") == "out of time"
    assert end_reason_words("illegal_move") == "illegal move"
    assert end_reason_words(EndReason.BOTH_OUT) == "the last two went out together"


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["/replays/open/", "/play/"])
def test_pages_that_load_cards_js_give_it_the_engine_end_reasons_and_their_words(
    client, user, page
):
    client.force_login(user)

    content = client.get(page).content.decode()

    assert "web/cards.js" in content
    found = re.search(r'<script id="end-reasons" type="application/json">(.*?)</script>', content)
    assert found, "no end-reasons script on the page"
    given = json.loads(found.group(1))
    assert given["by_rules"] == [reason.value for reason in EndReason]
    assert {reason.value: given["words"][reason.value] for reason in EndReason} == {
        reason.value: words for reason, words in END_REASON_WORDS.items()
    }


@pytest.mark.parametrize("script", sorted(STATIC.glob("*.js")), ids=lambda path: path.name)
def test_no_script_spells_an_engine_end_reason_itself(script):
    # "loser" is also the name of a result's field and of a CSS class, so only the other
    # reasons are looked for: a hand-written list of the reasons would name them too.
    spelled = [
        reason.value
        for reason in EndReason
        if reason != EndReason.LOSER
        and re.search(rf"""["'`]{reason.value}["'`]|\b{reason.value}\s*:""", script.read_text())
    ]

    assert spelled == []
