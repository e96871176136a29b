"""Watching a match in play and replaying a series, in Chromium."""

from __future__ import annotations

import pytest

from games.models import Match
from games.move_services import match_move_submit
from games.selectors import match_log, match_states

pytestmark = pytest.mark.browser


def deal_starts(match: Match) -> list[int]:
    """The step (ply) at which each deal of a series starts, from the engine's replay."""
    starts = [0]
    for ply, state in enumerate(match_states(match, match_log(match))):
        if state.deal_number >= len(starts):
            starts.append(ply)
    return starts


def test_a_series_replay_jumps_to_each_deal(page, live_server, celery_eager):
    from bots.services import builtin_bots_ensure
    from web.demo import bot_match_play

    bots = {bot.name: bot for bot in builtin_bots_ensure()}
    match = bot_match_play("durak", [bots["greedy"], bots["random"]], format="fool")
    starts = deal_starts(match)
    assert len(starts) >= 3, "a series of one or two deals shows too little"

    page.open(f"/matches/{match.pk}/")
    page.page.wait_for_selector("#table .seat")

    assert page.page.locator("#deal-marks .deal-mark").count() == len(starts) - 1
    heads = page.page.locator("#move-list li.deal-start")
    assert heads.all_inner_texts() == [f"Deal {n + 1}" for n in range(len(starts))]
    jumps = page.page.locator("#deals button")
    assert jumps.count() == len(starts)
    for number in (2, len(starts) - 1, 0):
        jumps.nth(number).click()
        label = page.page.inner_text("#ply-label")
        assert label.startswith(f"Deal {number + 1} · "), label
        assert page.page.input_value("#slider") == str(starts[number])
        assert jumps.nth(number).get_attribute("aria-current") == "step"
    heads.nth(1).click()
    assert page.page.input_value("#slider") == str(starts[1])
    page.screenshot("replay-series-deals")


def test_spectators_see_the_clock_of_the_seat_to_move_and_one_move_number(
    page, user_factory, celery_eager
):
    from tests.matches import play_random_moves, start_match

    match = start_match([user_factory(username="east"), user_factory(username="west")])
    match = play_random_moves(match, 3, seed=4)
    names = {0: "east", 1: "west"}

    page.open(f"/matches/{match.pk}/")
    page.page.wait_for_selector("#table .seat")
    clock = page.page.locator("#clock")
    assert clock.is_visible()
    to_move = f"Seat {match.to_move} ({names[match.to_move]}) to move: "
    assert clock.inner_text().startswith(to_move)
    assert page.page.inner_text("#ply-label") == f"Live · Move {match.ply} of {match.ply}"
    assert page.page.inner_text("#match-outcome") == f"In play, {match.ply} moves played"

    from games.selectors import match_state

    move = match_state(match).legal_moves()[0]
    match_move_submit(match_id=match.pk, seat=match.to_move, ply=match.ply, move=move)
    match.refresh_from_db()
    page.page.wait_for_function(
        "ply => document.getElementById('ply-label').textContent.endsWith(' of ' + ply)",
        arg=match.ply,
    )
    assert page.page.inner_text("#match-outcome") == f"In play, {match.ply} moves played"
    page.page.wait_for_function(
        "text => document.getElementById('clock').textContent.startsWith(text)",
        arg=f"Seat {match.to_move} ({names[match.to_move]}) to move: ",
    )
    page.screenshot("spectator-clock")
