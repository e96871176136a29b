"""A bot's comment in the kit: a bot function returns ``{"move": ..., "comment": ...}``
(the HTTP answer's shape); ``cardkit play`` records it in the deal's replay, ``cardkit
serve`` sends it with the move, and ``cardkit replay`` and ``Replay._repr_html_`` carry it
into the viewer."""

from __future__ import annotations

import html
import json
import re
import sys

from cardkit.arena import play_deal
from cardkit.caller import BotCaller
from cardkit.cli import main
from cardkit.protocol import MAX_COMMENT_BYTES, answer_parts
from cardkit.replay import Replay
from cardkit.specs import BuiltinPlayer, CommandPlayer, FunctionPlayer
from tests.bots.test_kit import move_request as request_for_durak
from tests.kit.test_cli import SECRET, served

# A Python bot that says why it plays the last legal move.
EXPLAINING = (
    "def choose(view, legal_moves):\n"
    "    return {'move': legal_moves[-1],\n"
    "            'comment': f'{len(legal_moves)} legal, I play the last <b>'}\n"
)
# A command bot answering a line with a comment.
COMMAND = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"move": request["legal_moves"][0], "comment": "first of them"}), flush=True)
"""


def explaining(view, legal_moves):
    return {"move": legal_moves[-1], "comment": f"{len(legal_moves)} legal, I play the last"}


def play_arguments(tmp_path, replays) -> list[str]:
    """``cardkit play`` of the explaining bot (mybot.py) against greedy, replays kept."""
    bot = f"{tmp_path / 'mybot.py'}:choose"
    return ["play", "--bot", bot, "--bot", "greedy", "--games", "1", "--replays", str(replays)]


def test_a_bot_function_may_return_its_move_or_the_move_with_a_comment():
    move = {"type": "take"}

    assert answer_parts(move) == (move, "")
    assert answer_parts({"move": move, "comment": "no cover"}) == (move, "no cover")
    assert answer_parts({"move": move, "comment": "x" * 2000}) == (move, "x" * MAX_COMMENT_BYTES)
    assert answer_parts({"move": move, "comment": 7}) == (move, "")


def test_play_records_each_moves_comment_in_the_deals_replay():
    players = [FunctionPlayer("explaining", explaining), BuiltinPlayer("greedy")]

    deal = play_deal("durak", {}, players, seating=(0, 1), seed="comments")

    steps = deal.replay()["steps"]
    mine = [step for step in steps if step["seat"] == 0]
    assert mine and all(re.fullmatch(r"\d+ legal, I play the last", s["comment"]) for s in mine)
    assert all(step["comment"] is None for step in steps if step["seat"] != 0)


def test_a_command_bots_comment_line_is_recorded(tmp_path):
    (tmp_path / "bot.py").write_text(COMMAND)
    player = CommandPlayer(f"{sys.executable} {tmp_path / 'bot.py'}")
    try:
        deal = play_deal(
            "durak", {}, [player, BuiltinPlayer("greedy")], seating=(0, 1), seed="cmd"
        )
    finally:
        player.close()

    comments = {step["comment"] for step in deal.replay()["steps"] if step["seat"] == 0}
    assert comments == {"first of them"}


def test_cardkit_play_writes_the_comments_into_the_replay_files(tmp_path, capsys):
    (tmp_path / "mybot.py").write_text(EXPLAINING)
    replays = tmp_path / "replays"

    status = main(play_arguments(tmp_path, replays))

    assert status == 0, capsys.readouterr()
    documents = [json.loads(path.read_text()) for path in sorted(replays.glob("*.json"))]
    comments = [s["comment"] for d in documents for s in d["steps"] if s["comment"]]
    assert comments and all(c.endswith(" legal, I play the last <b>") for c in comments)


def test_serve_sends_the_comment_a_bot_function_returns(tmp_path):
    (tmp_path / "mybot.py").write_text(EXPLAINING)
    request = request_for_durak()

    with (
        served(f"{tmp_path / 'mybot.py'}:choose") as (url, _process),
        BotCaller(allow_private=True) as caller,
    ):
        answer = caller.request_move(url, SECRET, request, 5.0)

    assert answer.ok, answer
    assert answer.move == request["legal_moves"][-1]
    assert answer.comment == f"{len(request['legal_moves'])} legal, I play the last <b>"


def test_the_replay_html_and_the_notebooks_view_carry_the_comment_as_text(tmp_path):
    (tmp_path / "mybot.py").write_text(EXPLAINING)
    replays = tmp_path / "replays"
    assert main(play_arguments(tmp_path, replays)) == 0
    path = sorted(replays.glob("*.json"))[0]
    out = tmp_path / "deal.html"

    assert main(["replay", str(path), "--out", str(out)]) == 0

    text = out.read_text(encoding="utf-8")
    # In the embedded document, with "<" escaped so that it stays data.
    assert "legal, I play the last \\u003Cb\\u003E" in text
    assert "I play the last <b>" not in text
    # The viewer shows it (the browser test looks at it drawn).
    assert 'className: "move-comment"' in text
    notebook = Replay.from_file(path)._repr_html_()
    assert html.escape("legal, I play the last \\u003Cb\\u003E", quote=True) in notebook


def test_the_readmes_commenting_bot_plays_and_its_comments_are_recorded():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "kit" / "README.md").read_text()
    (source,) = [
        block for block in re.findall(r"^```python\n(.*?)^```$", readme, re.S | re.M)
        if '"comment"' in block
    ]
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - the README's own example, run as written.

    players = [FunctionPlayer("readme", namespace["choose"]), BuiltinPlayer("random")]
    deal = play_deal("durak", {}, players, seating=(0, 1), seed="readme")

    comments = [step["comment"] for step in deal.replay()["steps"] if step["seat"] == 0]
    assert comments and all(c.endswith(" choices; I take only if I must") for c in comments)
