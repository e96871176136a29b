"""A bot's comments in its owner's call log: there at once while the match is played,
withheld with the answers once a sealed match is over, until its deal group ends."""

from __future__ import annotations

import json
import threading

import pytest

from bots import driver, services
from cardkit import make_server
from games.models import Match, Move
from tests.bots.arena_matches import new_match
from tests.web.test_author_pages import http_bot

pytestmark = pytest.mark.django_db


@pytest.fixture
def author(client, user_factory):
    user = user_factory(username="ada")
    client.force_login(user)
    return user


@pytest.fixture
def explaining_bot():
    """Return the URL of the kit's bot server on 127.0.0.1 that comments on every move."""

    def choose(view, legal_moves):
        return {"move": legal_moves[0], "comment": f"<i>{len(legal_moves)}</i> to choose from"}

    server = make_server(choose, 0, "s3cret")
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def call_lines(client, match) -> list[dict]:
    download = client.get(f"/me/bots/mybot/matches/{match.pk}/calls.jsonl")
    assert download.status_code == 200
    return [json.loads(line) for line in download.content.decode().splitlines()]


def test_the_owner_reads_each_comment_in_the_call_log_while_the_match_is_played(
    client, author, explaining_bot
):
    bot = http_bot(author, explaining_bot)
    match = new_match(author, [bot, services.builtin_bots_ensure()[0]])
    while not Move.objects.filter(match=match, seat=0).exists():
        assert driver.bot_turns_play(match_id=match.pk, max_moves=1) == 1
    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE

    lines = call_lines(client, match)
    page = client.get(f"/me/bots/mybot/matches/{match.pk}/calls/").content.decode()

    stored = [m.comment for m in Move.objects.filter(match=match, seat=0).order_by("ply")]
    assert [line["comment"] for line in lines] == stored
    assert stored[0].endswith("</i> to choose from")
    # Shown as text, never as markup.
    assert "&lt;i&gt;" in page and "to choose from" in page and "<i>" not in page


def test_a_sealed_matchs_comments_are_withheld_once_it_is_over(
    client, author, explaining_bot
):
    bot = http_bot(author, explaining_bot)
    match = new_match(author, [bot, services.builtin_bots_ensure()[0]])
    driver.bot_turns_play(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    # Its deck is dealt again in a match of its group still to be played (games.sealing).
    Match.objects.filter(pk=match.pk).update(sealed=True)
    sealed = call_lines(client, match)
    Match.objects.filter(pk=match.pk).update(sealed=False)
    unsealed = call_lines(client, match)

    assert sealed and all(line["comment"] is None for line in sealed)
    assert all(line["comment"].endswith(" to choose from") for line in unsealed)
