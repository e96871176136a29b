"""The long management commands on a terminal: a progress bar that log lines print above."""

import io
import logging
import re
import sys

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal(io.StringIO):
    """What a terminal is shown: standard output, standard error and the log, in one."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """Return ``on_terminal()``: from then on, the output and the log go to a terminal."""
    screen = Terminal()
    handler = logging.StreamHandler(screen)
    handler.setFormatter(logging.Formatter("LOG %(message)s"))
    logger = logging.getLogger("games")
    level = logger.level

    def on_terminal() -> Terminal:
        # Inside the test: pytest sets its own sys.stdout and sys.stderr again at each phase.
        monkeypatch.setattr(sys, "stdout", screen)
        monkeypatch.setattr(sys, "stderr", screen)
        logger.setLevel(logging.INFO)
        logger.addHandler(handler)
        return screen

    yield on_terminal
    logger.removeHandler(handler)
    logger.setLevel(level)


def screen_lines(screen: Terminal) -> list[str]:
    return [line for line in re.split(r"[\r\n]", ANSI.sub("", screen.getvalue())) if line]


def test_tournament_command_prints_each_log_line_whole_above_its_progress_bar(
    bot_factory, terminal
):
    bot_factory("random", name="cmd-random")
    bot_factory("greedy", name="cmd-greedy")

    screen = terminal()

    call_command("tournament", "--bots", "cmd-random,cmd-greedy", "--games", "4", "--inline")

    lines = screen_lines(screen)
    logged = [line for line in lines if "LOG " in line]
    # Every match logs its start and its end, each on a line of its own.
    assert len(logged) >= 8
    assert all(line.startswith("LOG match ") for line in logged)
    assert any(re.search(r"matches .*4/4", line) for line in lines)
    assert "Standings" in lines
    assert any("cmd-greedy" in line and line.lstrip().startswith("1") for line in lines)
    # The log handler writes to its own stream again once the bar is gone.
    logging.getLogger("games").info("after the bar")
    assert screen.getvalue().endswith("LOG after the bar\n")


def test_tournament_command_with_the_readme_options_plays_duplicate_deals_and_fits_ratings(
    bot_factory, capsys
):
    # README's tour runs `manage.py tournament --game durak --players 2 --bots ... --games 30
    # --duplicate`; the same options, fewer games, in this process.
    from tournaments.models import Tournament

    bot_factory("random", name="cmd-random")
    bot_factory("greedy", name="cmd-greedy")

    call_command(
        "tournament", "--game", "durak", "--players", "2", "--bots", "cmd-random,cmd-greedy",
        "--games", "2", "--duplicate", "--inline",
    )  # fmt: skip

    tournament = Tournament.objects.get()
    assert tournament.duplicate and tournament.players == 2 and tournament.game == "durak"
    assert tournament.matches.count() == 2
    printed = capsys.readouterr().out
    assert "Standings" in printed and "Ratings (Bradley-Terry fit" in printed
