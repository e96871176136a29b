"""``cardkit client``'s comforts: the TOML configuration file (a bad one is one line), the
back-off with jitter, the challenge rules, and turns of several matches thought about at
once on a real arena (the live server)."""

from __future__ import annotations

import logging
import random
import threading

import pytest

from cardkit.cli import main
from cardkit.client import ClientBot, backoff_waits
from cardkit.client_config import ChallengeRules, ClientConfig, config_load
from tests.bots.test_client_runner import assert_played_to_the_end, seat_client_bot

FULL = """
server = "http://127.0.0.1:8000"
token = "tok"
bot = "greedy"
concurrency = 3
seed = 7

[challenge]
accept = "builtin_only"
games = ["durak"]
max_players = 3
min_time_limit = 1
max_time_limit = 30.0

[reconnect]
first = 0.25
max = 4
"""


def test_a_config_file_gives_every_setting(tmp_path):
    path = tmp_path / "bot.toml"
    path.write_text(FULL)

    assert config_load(path) == ClientConfig(
        server="http://127.0.0.1:8000", token="tok", bot="greedy", concurrency=3, seed=7,
        challenge=ChallengeRules(accept="builtin_only", games=("durak",), max_players=3,
                                 min_time_limit=1.0, max_time_limit=30.0),
        backoff_first=0.25, backoff_max=4.0,
    )  # fmt: skip


def test_an_empty_config_file_keeps_the_defaults(tmp_path):
    path = tmp_path / "bot.toml"
    path.write_text("")

    assert config_load(path) == ClientConfig()


BAD_CONFIGS = {
    "missing": (None, "cannot read {path} (No such file or directory)"),
    "not-toml": ('server = "http://x\n', "{path} is not TOML: "),
    "unknown-key": ('tokn = "t"\n', "{path}: unknown key 'tokn' (the keys are server, token,"),
    "wrong-type": ("concurrency = \"2\"\n", "{path}: concurrency = '2' is not a whole number"),
    "out-of-range": ("concurrency = 0\n", "{path}: concurrency = 0 is not a whole number from"),
    "bad-url": ('server = "arena.org"\n', "{path}: server = 'arena.org' is not an http(s)://"),
    "bad-accept": (
        '[challenge]\naccept = "yes"\n',
        "{path} [challenge]: accept = 'yes' is not one of all, builtin_only, none, manual",
    ),
    "bad-game": ('[challenge]\ngames = ["chess"]\n', "{path} [challenge]: games = ['chess']"),
    "not-a-table": ("challenge = 1\n", "{path}: challenge is a table: write [challenge]"),
    "limits-crossed": (
        "[challenge]\nmin_time_limit = 9\nmax_time_limit = 2\n",
        "{path} [challenge]: min_time_limit is above max_time_limit",
    ),
    "backoff-crossed": (
        "[reconnect]\nfirst = 9\nmax = 2\n", "{path} [reconnect]: first = 9 is above max = 2"
    ),
}


@pytest.mark.parametrize("case", BAD_CONFIGS, ids=list(BAD_CONFIGS))
def test_a_bad_config_file_ends_the_client_with_one_line_naming_it(tmp_path, capsys, case):
    text, expected = BAD_CONFIGS[case]
    path = tmp_path / "bot.toml"
    if text is not None:
        path.write_text(text)

    status = main(["client", "greedy", "--token", "t", "--config", str(path)])

    assert status == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("cardkit client: " + expected.format(path=path)), line


def test_a_config_without_a_bot_or_token_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARENA_BOT_TOKEN", raising=False)
    path = tmp_path / "bot.toml"
    path.write_text('token = "t"\n')

    with pytest.raises(SystemExit) as no_bot:
        main(["client", "--config", str(path)])
    path.write_text('bot = "greedy"\n')
    with pytest.raises(SystemExit) as no_token:
        main(["client", "--config", str(path)])

    assert no_bot.value.code == no_token.value.code == 2
    err = capsys.readouterr().err
    assert "the bot to run is required: give BOT, or bot = ... in --config" in err
    assert "the bot's API token is required: --token, $ARENA_BOT_TOKEN or --config" in err


def test_the_back_off_doubles_to_its_cap_with_each_wait_in_the_bounds_upper_half():
    waits = backoff_waits(0.5, 15.0, random.Random(1))
    drawn = [next(waits) for _ in range(12)]
    bounds = [min(0.5 * 2**k, 15.0) for k in range(12)]

    assert all(bound / 2 <= wait <= bound for wait, bound in zip(drawn, bounds, strict=True))
    assert max(drawn) <= 15.0 and drawn[-1] >= 7.5


def test_the_back_off_of_two_runners_differs_so_they_do_not_knock_in_step():
    first = backoff_waits(0.5, 15.0, random.Random(1))
    second = backoff_waits(0.5, 15.0, random.Random(2))

    assert [next(first) for _ in range(5)] != [next(second) for _ in range(5)]


# -- the challenge rules --------------------------------------------------------------------

CHALLENGE = {
    "id": 1, "status": "pending", "challenger": "ann", "bot": "mine", "game": "durak",
    "players": 2, "move_time_limit": 5.0, "seats": [{"bot": "greedy"}, {"bot": "mine"}],
}  # fmt: skip


def answer(rules: ChallengeRules, busy: bool = False, **changes) -> tuple[str, str] | None:
    return rules.answer({**CHALLENGE, **changes}, bot="mine", busy=busy)


def test_manual_leaves_the_challenge_to_the_owner_and_none_declines_it():
    assert answer(ChallengeRules(accept="manual")) is None
    assert answer(ChallengeRules(accept="none")) == ("decline", "mine takes no challenges.")


def test_all_accepts_a_table_it_can_play():
    assert answer(ChallengeRules(accept="all"), seats=[{"user": "ann"}, {"bot": "mine"}]) == (
        "accept", ""
    )


def test_builtin_only_declines_a_table_with_a_person_or_another_owners_bot():
    rules = ChallengeRules(accept="builtin_only")

    assert answer(rules) == ("accept", "")
    for other in ({"user": "ann"}, {"bot": "anns-bot"}):
        assert answer(rules, seats=[other, {"bot": "mine"}]) == (
            "decline", "mine plays against built-in bots only."
        )


def test_builtin_only_reads_a_seat_s_kind_when_the_arena_gives_it():
    rules = ChallengeRules(accept="builtin_only")
    mine = {"bot": "mine", "kind": "client"}

    # A built-in bot of a name the kit does not know, and another owner's bot named
    # like a built-in: the arena's word wins over the names.
    assert answer(rules, seats=[{"bot": "oracle", "kind": "builtin"}, mine]) == ("accept", "")
    assert answer(rules, seats=[{"bot": "greedy", "kind": "http"}, mine]) == (
        "decline", "mine plays against built-in bots only."
    )


def test_a_game_table_size_or_time_limit_outside_the_rules_is_declined():
    rules = ChallengeRules(accept="all", games=("durak",), max_players=2,
                           min_time_limit=1.0, max_time_limit=10.0)  # fmt: skip

    assert answer(rules, game="volynshchik") == ("decline", "mine plays durak only.")
    assert answer(rules, players=3) == ("decline", "mine plays at tables of 2 or fewer.")
    assert answer(rules, move_time_limit=0.5) == ("decline", "mine plays with 1 to 10 s a move.")
    assert answer(rules, move_time_limit=60) == ("decline", "mine plays with 1 to 10 s a move.")
    assert answer(rules, move_time_limit=10) == ("accept", "")


def test_a_runner_playing_as_many_matches_as_it_may_declines_a_challenge():
    assert answer(ChallengeRules(accept="all"), busy=True) == (
        "decline", "mine is busy: it plays as many matches as it may at once."
    )


# -- on the live server ---------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.django_db(transaction=True)
def test_concurrency_thinks_about_turns_of_two_matches_at_once(
    live_server, user, celery_eager, caplog
):
    token, matches = seat_client_bot(user, "durak", 2, count=2)
    # The bot's first turn of each match waits for the other's: the two meet only if both
    # are thought about at once (one at a time, the barrier breaks after its timeout).
    barrier = threading.Barrier(2, timeout=30)
    met: set[int] = set()

    def answer_turn(request: dict) -> dict:
        if request["match_id"] not in met:
            met.add(request["match_id"])
            barrier.wait()
        return request["legal_moves"][0]

    ids = {match.pk for match in matches}
    runner = ClientBot(live_server.url, token, None, answer=answer_turn, concurrency=2)
    with caplog.at_level(logging.INFO, logger="cardkit.client"):
        runner.run(until=lambda: ids <= set(runner.finished))

    assert met == ids
    for match in matches:
        assert_played_to_the_end(match)
    turns = [r.getMessage() for r in caplog.records if " thought " in r.getMessage()]
    played = sum(m.moves.filter(seat=0).count() for m in matches)
    assert len(turns) == played
    assert all(line.endswith(" ms") and " seat 0: {" in line for line in turns)
