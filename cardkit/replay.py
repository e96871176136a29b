"""A replay anywhere: one self-contained HTML file that plays a replay document with the
site's viewer, and a ``Replay`` that a notebook shows as that file.

    cardkit replay replays/deal-00001.json --out deal.html

    >>> Replay.from_file("replays/deal-00001.json")     # in Jupyter: the viewer itself

The document is the API's (``GET /api/v1/matches/<id>/replay/``) or a local arena's
(``cardkit play --replays DIR``). The HTML inlines the viewer's script, card drawing and
stylesheet (``cardkit.viewer``, the files the server serves) and embeds the document: it
needs no server and loads nothing from the network.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from cardkit.viewer import asset
from cardkit.viewer.end_reasons import end_reasons_for_pages

# As Django's json_script: the JSON cannot close its <script> element nor open a comment.
_JSON_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


class ReplayError(ValueError):
    """The document is not a replay: the message says what it lacks."""


def replay_check(document: Any) -> dict:
    """Return ``document`` when it is a replay (steps, each with a state); else raise."""
    if not isinstance(document, dict):
        raise ReplayError("a replay is a JSON object; this is not one")
    steps = document.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ReplayError("a replay has a list of steps; this has none")
    state = steps[0].get("state") if isinstance(steps[0], dict) else None
    if not isinstance(state, dict) or "game" not in state or "players" not in state:
        raise ReplayError("a replay's first step holds the dealt state; this one has none")
    return document


def replay_html(document: dict, *, title: str | None = None) -> str:
    """Return one HTML document that plays ``document`` with the site's replay viewer."""
    replay_check(document)
    state = document["steps"][0]["state"]
    seats = document.get("seats") or []
    heading = title or " · ".join(
        part
        for part in (
            str(state["game"]).capitalize(),
            " v ".join(str(seat) for seat in seats),
            f"{len(document['steps']) - 1} moves",
        )
        if part
    )
    moves = asset("templates/web/_replay_moves.html")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(heading)} · Card Arena replay</title>
<style>
{asset("static/arena.css")}
</style>
</head>
<body>
{asset("templates/web/_suits.html")}
<main id="main" class="page">
<div class="page-head"><div><h1>{html.escape(heading)}</h1></div></div>
<div class="layout-side" id="viewer">
{asset("templates/web/_replay_viewer.html")}
  <aside>
{moves}
  </aside>
</div>
</main>
{_json_script(end_reasons_for_pages(), "end-reasons")}
{_json_script({}, "match-config")}
{_json_script(document, "replay-document")}
<script>
{asset("static/cards.js")}
</script>
<script>
{asset("static/replay.js")}
</script>
<script>
window.ArenaReplay.open(JSON.parse(document.getElementById("replay-document").textContent));
</script>
</body>
</html>
"""


def _json_script(value: Any, element_id: str) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)
    return f'<script id="{element_id}" type="application/json">{text}</script>'


class Replay:
    """A replay document; in a notebook it shows itself in the site's viewer."""

    def __init__(self, document: dict) -> None:
        self.document = replay_check(document)

    @classmethod
    def from_file(cls, path: str | Path) -> Replay:
        """Load a replay JSON file (a local arena's, or one downloaded from the API)."""
        try:
            return cls(json.loads(Path(path).read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path} is not JSON ({exc})") from None

    @property
    def seats(self) -> list[str]:
        return list(self.document.get("seats") or [])

    def __repr__(self) -> str:
        state = self.document["steps"][0]["state"]
        return (
            f"<Replay {state['game']} {len(self.document['steps']) - 1} moves"
            f" seats={self.seats!r}>"
        )

    def html(self) -> str:
        """Return the standalone HTML document (as ``cardkit replay`` writes it)."""
        return replay_html(self.document)

    def save_html(self, path: str | Path) -> Path:
        """Write the standalone HTML document to ``path``; return the path."""
        path = Path(path)
        path.write_text(self.html(), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        # An iframe keeps the viewer's ids, keys and styles apart from the notebook's page.
        return (
            f'<iframe srcdoc="{html.escape(self.html(), quote=True)}" '
            'style="width:100%;height:640px;border:0" '
            'sandbox="allow-scripts" title="Card Arena replay"></iframe>'
        )
