"""End to end: a client bot run by ``cardkit client --config FILE`` answers the challenges
another user makes through the API, by the ``[challenge]`` rules of its file, and plays
the match of the one it accepts to its end.

The arena is the live server (uvicorn in this process, on the test database: SQLite, or
PostgreSQL in its pass), the built-in opponents' turns run as eager tasks; the client is
the in-tree ``cardkit`` in a process of its own, with the bot's own token (the server
lets its owner or the bot answer: the owner consented by running it with these rules).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from accounts.tokens import token_create
from benchmarks.harness import stop_process_group, wait_until
from bots import services
from bots.models import Bot, Challenge
from cardkit.client import ClientBot
from cardkit.client_config import ChallengeRules
from cardkit.serve import load_strategy
from games.models import Match, Move

ROOT = Path(__file__).resolve().parents[2]
BOT = "bobs-client"

pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def client_bot(
    folder: Path, server: str, token: str, rules: str, concurrency: int = 1
) -> Iterator[Path]:
    """Run ``cardkit client --config bot.toml`` (greedy, the ``[challenge]`` ``rules``);
    yield its log once it knows its bot."""
    config = folder / "bot.toml"
    config.write_text(
        f'server = "{server}"\ntoken = "{token}"\nbot = "greedy"\nseed = 1\n'
        f"concurrency = {concurrency}\n\n"
        f"[challenge]\n{rules}\n\n[reconnect]\nfirst = 0.2\nmax = 2\n"
    )
    log = folder / "client.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "cardkit", "client", "--config", str(config)],
            cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(
            lambda: process.poll() is not None or "playing as bot" in log.read_text(),
            timeout=60, what="cardkit client",
        )  # fmt: skip
        assert process.poll() is None, log.read_text()
        yield log
        assert process.poll() is None, log.read_text()
    finally:
        stop_process_group(process, timeout=10)


@pytest.fixture
def arena(live_server, celery_eager, user_factory):
    """Return ``(api, alice's token, the bot's token)``: bob's client bot plays Durak and
    Volynshchik, and its policy on the server is ``manual`` (the default), so each
    challenge waits for an answer; alice challenges it."""
    services.builtin_bots_ensure()
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    bot, bot_token = services.bot_register(
        owner=bob, name=BOT, kind="client", games=["durak", "volynshchik"]
    )
    assert bot.challenge_policy == "manual"
    with httpx.Client(base_url=f"{live_server.url}/api/v1", timeout=30) as api:
        yield api, token_create(user=alice)[1], bot_token


def challenge(api: httpx.Client, token: str, **table) -> dict:
    made = api.post("/challenges/", headers={"Authorization": f"Token {token}"}, json=table)
    assert made.status_code == 201, made.text
    assert made.json()["status"] == "pending"
    return made.json()


def answered(api: httpx.Client, token: str, challenge_id: int) -> dict:
    """Wait for the challenge's answer; return it."""
    shown = {}

    def done() -> bool:
        shown.update(
            api.get(
                f"/challenges/{challenge_id}/", headers={"Authorization": f"Token {token}"}
            ).json()
        )
        return shown["status"] != Challenge.Status.PENDING

    wait_until(done, timeout=60, what=f"an answer to challenge {challenge_id}")
    return shown


def logged(log: Path, line: str) -> str:
    """Wait until the client's log holds ``line``; return the log. The client logs an
    answer after the server took it, so a test that saw the answer may read the log a
    moment before the line is written."""
    wait_until(lambda: line in log.read_text(), timeout=30, what=f"{line!r} in the log")
    return log.read_text()


def test_the_client_bot_accepts_a_challenge_by_its_rules_and_plays_the_match_to_its_end(
    arena, live_server, tmp_path
):
    api, alice, bot_token = arena
    rules = 'accept = "builtin_only"\ngames = ["durak"]\nmin_time_limit = 1\nmax_time_limit = 30'
    with client_bot(tmp_path, live_server.url, bot_token, rules) as log:
        made = challenge(
            api, alice, bot=BOT, game="durak", players=2, move_time_limit=10,
            seats=[{"bot": "greedy"}, {"bot": BOT}],
        )  # fmt: skip
        shown = answered(api, alice, made["id"])
        assert shown["status"] == "accepted", shown
        assert shown["answered_by"] == f"bot:{BOT}"
        match = Match.objects.get(pk=shown["match"])
        wait_until(
            lambda: Match.objects.get(pk=match.pk).status != Match.Status.ACTIVE,
            timeout=120, what="the challenge's match to end",
        )  # fmt: skip
        text = logged(log, f"challenge {made['id']} from alice: accepted")

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and not match.rated
    assert match.forfeit_seat is None, match.forfeit_reason
    assert Move.objects.filter(match=match, seat=1).exists()
    assert f"challenge {made['id']} from alice: accepted" in text
    assert re.search(rf"match {match.pk} ply \d+ seat 1: \{{.*\}}, thought \d+ ms", text), text
    assert "Traceback" not in text


def test_the_client_bot_declines_a_game_it_does_not_play_and_a_time_limit_out_of_range(
    arena, live_server, tmp_path
):
    api, alice, bot_token = arena
    rules = 'accept = "all"\ngames = ["durak"]\nmin_time_limit = 1\nmax_time_limit = 30'
    with client_bot(tmp_path, live_server.url, bot_token, rules) as log:
        other_game = challenge(
            api, alice, bot=BOT, game="volynshchik", players=3, move_time_limit=10,
            seats=[{"bot": "greedy"}, {"bot": BOT}, {"bot": "random"}],
        )  # fmt: skip
        too_slow = challenge(
            api, alice, bot=BOT, game="durak", players=2, move_time_limit=60,
            seats=[{"bot": "greedy"}, {"bot": BOT}],
        )  # fmt: skip
        by_game = answered(api, alice, other_game["id"])
        by_time = answered(api, alice, too_slow["id"])
        text = logged(log, f"challenge {too_slow['id']} from alice: declined")

    assert (by_game["status"], by_game["match"]) == ("declined", None)
    assert by_game["reason"] == f"{BOT} plays durak only."
    assert (by_time["status"], by_time["match"]) == ("declined", None)
    assert by_time["reason"] == f"{BOT} plays with 1 to 30 s a move."
    assert by_game["answered_by"] == by_time["answered_by"] == f"bot:{BOT}"
    assert not Match.objects.exists()
    assert f"challenge {too_slow['id']} from alice: declined" in text


def test_the_client_bot_declines_a_challenge_while_it_plays_as_many_matches_as_it_may(
    arena, live_server, tmp_path
):
    api, alice, bot_token = arena
    table = {"bot": BOT, "game": "durak", "players": 2, "move_time_limit": 10,
             "seats": [{"bot": "greedy"}, {"bot": BOT}]}  # fmt: skip
    # Both wait before the client starts: its stream opens with the two of them at once,
    # before the first one's match is announced.
    first, second = challenge(api, alice, **table), challenge(api, alice, **table)
    with client_bot(tmp_path, live_server.url, bot_token, 'accept = "all"', concurrency=1):
        answers = [answered(api, alice, made["id"]) for made in (first, second)]
        wait_until(
            lambda: not Match.objects.filter(status=Match.Status.ACTIVE).exists(),
            timeout=120, what="the accepted challenge's match to end",
        )  # fmt: skip

    assert [shown["status"] for shown in answers] == ["accepted", "declined"], answers
    assert answers[1]["reason"] == (
        f"{BOT} is busy: it plays as many matches as it may at once."
    )
    assert Match.objects.get().status == Match.Status.FINISHED


@pytest.mark.parametrize(("policy", "warned"), [("accept_all", True), ("manual", False)])
def test_the_client_says_its_rules_are_not_used_when_the_arena_answers_for_the_bot(
    arena, live_server, caplog, policy, warned
):
    _api, _alice, bot_token = arena
    Bot.objects.filter(name=BOT).update(challenge_policy=policy)
    runner = ClientBot(
        live_server.url, bot_token, load_strategy("greedy"),
        challenges=ChallengeRules(accept="all", games=("durak",)),
    )  # fmt: skip

    with caplog.at_level("WARNING", logger="cardkit.client"):
        runner.run(until=lambda: True)

    said = [r.getMessage() for r in caplog.records if r.name == "cardkit.client"]
    assert any(
        f"its policy is {policy}): the runner's [challenge] rules apply only" in line
        for line in said
    ) is warned, said
