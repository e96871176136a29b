"""The local arena: the server's requests and replays, every kind of bot, duplicate deals."""

from __future__ import annotations

import json
import sys

from cardkit.arena import play_deal, play_deals, seatings, standings
from cardkit.specs import BuiltinPlayer, CommandPlayer, FunctionPlayer, HttpPlayer
from cardkit.stats.proportions import wilson_interval
from tests.bots.conftest import reply

SECRET = "kit-arena-secret"
# What differs between two asks of the same position: when it was asked, and the match id.
PER_CALL = ("deadline", "time_limit_ms", "match_id")


class Recorder:
    """A player that answers like ``inner`` and keeps every request it was asked."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.requests = inner, inner.name, []

    def ask(self, request, time_limit, rng):
        self.requests.append(request)
        return self.inner.ask(request, time_limit, rng)

    def close(self) -> None:
        self.inner.close()


def first_legal(view, legal_moves):
    return legal_moves[0]


def _stripped(request: dict) -> dict:
    return {key: value for key, value in request.items() if key not in PER_CALL}


def test_local_requests_and_replay_equal_the_servers_for_the_same_deal(
    user, api_client, http_bot
):
    from bots import driver, services
    from bots.models import Bot
    from games.models import Match
    from games.seating import SeatHolder
    from games.services import match_create

    def answer_first_legal(handler, request):
        reply(handler, json.dumps({"move": request["body"]["legal_moves"][0]}).encode())

    url, server = http_bot(answer_first_legal)
    web = Bot.objects.create(
        name="webbot", owner=user, kind=Bot.Kind.HTTP, url=url, secret=SECRET, games=["durak"]
    )
    greedy = {bot.name: bot for bot in services.builtin_bots_ensure()}["greedy"]
    match = match_create(
        creator=user, game="durak", players=2, seats=[SeatHolder(bot=web), SeatHolder(bot=greedy)],
        move_time_limit=3.0,
    )
    driver.bot_turns_play(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED

    local = Recorder(FunctionPlayer("first", first_legal))
    deal = play_deal(
        "durak", {"players": 2}, [local, BuiltinPlayer("greedy")], seating=(0, 1),
        seed=match.seed, dealer=match.dealer,
    )

    assert len(local.requests) > 3
    assert [_stripped(r) for r in local.requests] == [
        _stripped(r["body"]) for r in server.requests
    ]
    api = api_client.get(f"/api/v1/matches/{match.pk}/replay/").json()
    mine = deal.replay()
    for document in (api, mine):
        document.pop("match")
        document.pop("seats", None)
        document.pop("seat_versions", None)  # the arena's bots have versions; local ones not
        for step in document["steps"]:
            for timing in ("received_at", "time_taken", "think_time"):
                step.pop(timing)
    assert mine == api


def test_duplicate_deals_play_every_deck_once_in_every_rotation():
    assert seatings(3, 7, duplicate=True) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    players = [BuiltinPlayer("greedy"), BuiltinPlayer("random"), BuiltinPlayer("random")]
    deals = play_deals("durak", {"players": 3}, players, games=4, duplicate=True)
    assert len(deals) == 12
    assert len({deal.seed for deal in deals}) == 4
    rows = standings(deals, ["greedy", "random-a", "random-b"])
    assert sorted(row.deals for row in rows) == [12, 12, 12]
    # Every deal has one loser or is drawn (a draw counts in every player's row).
    assert sum(row.losses for row in rows) + rows[0].draws == 12


def test_an_illegal_move_forfeits_the_deal_with_the_servers_fault_name():
    def cheat(view, legal_moves):
        return {"type": "take", "cards": ["AS"]}

    deal = play_deal(
        "durak", {"players": 2}, [FunctionPlayer("cheat", cheat), BuiltinPlayer("random")],
        seating=(0, 1), seed="1",
    )
    assert deal.fault[:2] == (0, "illegal_move")
    assert deal.result["loser"] == 0 and deal.end_reason == "illegal_move"


def test_a_command_bot_speaks_json_lines_on_stdin_and_stdout(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    print(json.dumps({'move': request['legal_moves'][-1]}), flush=True)\n"
    )
    player = CommandPlayer(f"{sys.executable} {script}")
    try:
        deals = play_deals(
            "volynshchik", {"players": 3}, [player, BuiltinPlayer("random"),
                                            BuiltinPlayer("greedy")], games=2,
        )
    finally:
        player.close()
    assert all(deal.fault is None for deal in deals)


def test_an_http_bot_plays_signed_as_the_server_calls_it(kit_http_bot):
    url, _server = kit_http_bot(SECRET)
    player = HttpPlayer(url, SECRET)
    try:
        deals = play_deals("durak", {"players": 2}, [player, BuiltinPlayer("greedy")], games=2)
    finally:
        player.close()
    assert [deal.fault for deal in deals] == [None, None]


def test_an_http_bot_with_the_wrong_secret_forfeits_as_on_the_server(kit_http_bot):
    url, _server = kit_http_bot("another-secret")
    player = HttpPlayer(url, SECRET)
    try:
        deal = play_deal(
            "durak", {"players": 2}, [player, BuiltinPlayer("greedy")], seating=(0, 1), seed="2"
        )
    finally:
        player.close()
    assert deal.fault[1] == "http_status"


def test_wilson_interval_of_a_proportion():
    low, high = wilson_interval(10, 100)
    assert round(low, 4) == 0.0552 and round(high, 4) == 0.1744
