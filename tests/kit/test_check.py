"""The protocol checker against real bot servers on 127.0.0.1: the kit's and hostile ones."""

from __future__ import annotations

import json
import time

from cardkit.check import FAIL, OK, WARN, check_bot
from cardkit.cli import main
from tests.bots.conftest import reply

SECRET = "checked-bot-secret"


def statuses(report) -> dict[str, str]:
    return {check.name: check.status for check in report.checks}


def answering(move_of):
    """Return a bot behaviour that pongs, and answers a move request ``move_of(body)``,
    without looking at any signature."""

    def behaviour(handler, request):
        body = request["body"]
        if body.get("type") == "ping":
            reply(handler, b'{"pong": true}')
        else:
            reply(handler, json.dumps({"move": move_of(body)}).encode())

    return behaviour


def test_the_kits_bot_passes_every_check_and_the_command_exits_0(kit_http_bot, capsys):
    url, _server = kit_http_bot(SECRET)

    report = check_bot(url, SECRET, games=["durak", "volynshchik"], deals=1)

    assert report.ok
    assert set(statuses(report).values()) == {OK}
    assert "refuses a replayed request" in statuses(report)
    assert main(["check", url, "--secret", SECRET, "--deals", "1"]) == 0
    assert "the arena would play this bot" in capsys.readouterr().out


def test_a_bot_that_answers_unsigned_and_stale_requests_is_warned_not_failed(http_bot):
    url, _server = http_bot(answering(lambda body: body["legal_moves"][0]))

    report = check_bot(url, SECRET, games=["durak"], deals=1)

    assert report.ok
    found = statuses(report)
    for name in ("unsigned", "wrong signature", "stale", "replayed"):
        assert next(s for n, s in found.items() if name in n) == WARN


def test_an_illegal_move_fails_with_its_fault_name_and_exit_status_1(http_bot, capsys):
    url, _server = http_bot(answering(lambda body: {"type": "take", "cards": ["AS"]}))

    report = check_bot(url, SECRET, games=["volynshchik"], deals=1)

    assert not report.ok
    failed = [check for check in report.checks if check.status == FAIL]
    assert len(failed) == 4 and all("illegal_move" in check.detail for check in failed)
    assert main(["check", url, "--secret", SECRET, "--game", "volynshchik"]) == 1
    assert "the arena would forfeit this bot" in capsys.readouterr().out


def test_a_slow_answer_fails_as_a_timeout(http_bot):
    def slow(body):
        time.sleep(0.4)
        return body["legal_moves"][0]

    url, _server = http_bot(answering(slow))

    report = check_bot(url, SECRET, games=["durak"], deals=1, time_limit=0.2)

    assert not report.ok
    assert "timeout" in next(c.detail for c in report.checks if c.name == "durak, 2 players")


def test_an_answer_over_64_kib_fails_as_too_large(http_bot):
    url, _server = http_bot(answering(lambda body: {**body["legal_moves"][0], "x": "y" * 70000}))

    report = check_bot(url, SECRET, games=["durak"], deals=1)

    failed = [check for check in report.checks if check.status == FAIL]
    assert failed and all("response_too_large" in c.detail or "bytes" in c.detail for c in failed)
