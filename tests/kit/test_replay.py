"""``cardkit replay``: one HTML file that plays a replay with no server and no network, and
``cardkit.replay.Replay``, which a notebook shows as that file."""

from __future__ import annotations

import html
import json
import re

from cardkit.arena import play_deal, write_replay
from cardkit.cli import main
from cardkit.replay import Replay
from cardkit.specs import BuiltinPlayer
from cardkit.viewer import asset

# An element that loads something: <script src=...>, <link href=...>, <img src=...>, url(...).
RESOURCE = re.compile(
    r"""(?:\bsrc|\bhref)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//"""
)


def _replay_file(tmp_path):
    players = [BuiltinPlayer("greedy"), BuiltinPlayer("random")]
    deal = play_deal("durak", {}, players, seating=(0, 1), seed="kit-replay")
    return write_replay(deal, tmp_path)


def test_replay_writes_one_html_file_that_loads_nothing_and_embeds_the_replay(tmp_path, capsys):
    path = _replay_file(tmp_path)
    out = tmp_path / "deal.html"

    assert main(["replay", str(path), "--out", str(out)]) == 0

    text = out.read_text(encoding="utf-8")
    assert RESOURCE.search('<link rel="stylesheet" href="https://cdn.example/a.css">')
    assert RESOURCE.search(text) is None
    embedded = re.search(r'<script id="replay-document" type="application/json">(.*?)</script>',
                         text, re.DOTALL)
    assert json.loads(embedded.group(1)) == json.loads(path.read_text())
    # The site's viewer, whole: its script, card drawing and stylesheet.
    for name in ("static/replay.js", "static/cards.js", "static/arena.css"):
        assert asset(name) in text
    assert f"{out}: " in capsys.readouterr().out


def test_replay_without_out_writes_the_html_beside_the_json(tmp_path):
    path = _replay_file(tmp_path)

    assert main(["replay", str(path)]) == 0

    assert path.with_suffix(".html").is_file()


def test_replay_of_a_file_that_is_not_a_replay_ends_with_one_line(tmp_path, capsys):
    path = tmp_path / "other.json"
    path.write_text('{"steps": []}')

    assert main(["replay", str(path)]) == 1

    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"cardkit replay: {path}: a replay has a list of steps; this has none: " \
        "give a replay JSON file"
    assert not path.with_suffix(".html").exists()


def test_a_replay_that_closes_its_script_element_stays_data(tmp_path):
    document = json.loads(_replay_file(tmp_path).read_text())
    document["seats"] = ["</script><script>alert(1)</script>", "b"]

    text = Replay(document).html()

    assert "<script>alert(1)" not in text
    assert "\\u003C/script\\u003E" in text


def test_a_replay_in_a_notebook_is_the_standalone_document_in_an_iframe(tmp_path):
    replay = Replay.from_file(_replay_file(tmp_path))

    shown = replay._repr_html_()

    srcdoc = re.fullmatch(r'<iframe srcdoc="([^"]*)" .*</iframe>', shown, re.DOTALL)
    assert html.unescape(srcdoc.group(1)) == replay.html()
    assert replay.seats == ["greedy", "random"]
