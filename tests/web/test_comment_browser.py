"""A bot's comment on its move in the replay viewer: absent while the match is in play,
shown beside its move in the move list and in the caption once the match is over, on the
site and in a standalone replay (``cardkit replay``)."""

from __future__ import annotations

import pytest

from tests.web.conftest import SCREENSHOTS

pytestmark = pytest.mark.browser


def comment_for(ply: int) -> str:
    return f"ply {ply}: the first legal move, keeping trumps for later"


def person_against_random(user_factory):
    """A Durak deal of a person (seat 0) against the built-in random bot, started."""
    from bots.services import builtin_bots_ensure
    from games.seating import SeatHolder
    from games.services import match_create

    random_bot = next(bot for bot in builtin_bots_ensure() if bot.name == "random")
    person = user_factory(username="explainer")
    return match_create(
        creator=person, game="durak", players=2,
        seats=[SeatHolder(user=person), SeatHolder(bot=random_bot)],
    )  # fmt: skip


def play_with_comments(match, *, moves: int | None = None) -> int:
    """Play seat 0's turns with a comment each (the bot answers at once); return how many."""
    from games.models import Match
    from games.move_services import match_move_submit
    from games.selectors import match_state

    played = 0
    while moves is None or played < moves:
        match.refresh_from_db()
        if match.status != Match.Status.ACTIVE:
            break
        assert match.to_move == 0
        move = match_state(match).legal_moves()[0]
        match_move_submit(
            match_id=match.pk, seat=0, ply=match.ply, move=move, comment=comment_for(match.ply)
        )
        played += 1
    return played


def test_the_replay_viewer_shows_a_comment_beside_its_move_once_the_match_is_over(
    page, user_factory
):
    from games.models import Match, Move

    match = person_against_random(user_factory)
    assert play_with_comments(match, moves=1) == 1

    page.open(f"/matches/{match.pk}/")
    page.page.wait_for_selector("#move-list li[data-ply]")
    assert page.page.locator(".move-comment").count() == 0
    assert "keeping trumps" not in page.page.content()

    play_with_comments(match)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    mine = list(Move.objects.filter(match=match, seat=0).order_by("ply"))
    first = mine[0].ply + 1  # the step after the move

    page.open(f"/matches/{match.pk}/?ply={first}")
    page.page.wait_for_selector("#move-list .move-comment")
    listed = page.page.locator("#move-list .move-comment")
    assert listed.count() == len(mine)
    item = page.page.locator(f'#move-list li[data-ply="{first}"]')
    assert item.locator(".move-comment").inner_text() == comment_for(mine[0].ply)
    other = next(m for m in Move.objects.filter(match=match, seat=1).order_by("ply"))
    theirs = page.page.locator(f'#move-list li[data-ply="{other.ply + 1}"]')
    assert theirs.locator(".move-comment").count() == 0
    caption = page.page.locator("#move-words .move-comment")
    assert caption.inner_text() == comment_for(mine[0].ply)
    assert caption.is_visible()
    page.screenshot("comment-replay")


def test_a_standalone_replay_shows_the_comments_of_a_kit_deal(browser, tmp_path):
    from cardkit.arena import play_deal, write_replay
    from cardkit.cli import main
    from cardkit.specs import BuiltinPlayer, FunctionPlayer

    def explaining(view, legal_moves):
        return {"move": legal_moves[0], "comment": f"{len(legal_moves)} choices: the first"}

    players = [FunctionPlayer("explaining", explaining), BuiltinPlayer("greedy")]
    deal = play_deal("durak", {}, players, seating=(0, 1), seed="standalone-comments")
    out = tmp_path / "deal.html"
    assert main(["replay", str(write_replay(deal, tmp_path)), "--out", str(out)]) == 0
    ours = [ply + 1 for ply, entry in enumerate(deal.log) if entry.seat == 0]

    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        tab = context.new_page()
        tab.goto(out.as_uri())
        tab.wait_for_selector("#move-list .move-comment")
        assert tab.locator("#move-list .move-comment").count() == len(ours)
        tab.locator(f'#move-list li[data-ply="{ours[0]}"]').click()
        assert tab.locator("#move-words .move-comment").inner_text().endswith(" choices: the first")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / "comment-replay-standalone.png"), full_page=True)
    finally:
        context.close()
