"""Run a client bot: it plays through the arena's REST API with its own token.

    python -m bots.kit.client --server http://127.0.0.1:8000 --token T --strategy greedy

The token is the one shown when the bot was registered with ``"kind": "client"`` (it can
come from ``$ARENA_BOT_TOKEN`` instead). The runner asks the arena which bot the token
belongs to, then holds ONE connection, the account's event stream, however many matches
the bot plays: the arena announces each match, each of the bot's turns (with its view and
legal moves) and each end, and the runner answers every turn with the move that
``choose(view, legal_moves)`` returns:

    GET  /api/v1/bots/?account=me                              which bot am I
    GET  /api/v1/stream/events/   (NDJSON)                     match_started, your_turn,
                                                               match_finished, reconnect
    POST /api/v1/matches/<id>/moves/  {"ply", "seat", "move"}  with an Idempotency-Key

A stream that ends (the server restarts: its ``reconnect`` event; the network fails) is
opened again after a back-off; the arena then announces the turns still open, and a turn
answered twice is played once (the same Idempotency-Key).

Your own bot needs one function::

    from bots.kit.client import ClientBot

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        return legal_moves[0]

    ClientBot("https://arena.example.org", "the token", choose).run()

Needs httpx, not Django.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator

import httpx

from bots.kit.server import Choose

TOKEN_ENV = "ARENA_BOT_TOKEN"
API = "/api/v1"
EVENTS = "/stream/events/"
# Seconds without a byte from the stream (the arena sends a keep-alive every 20) after
# which the connection is taken for dead and opened again.
STREAM_SILENCE = 45.0
# Back-off after a network error or a 5xx answer: from 0.5 s, doubling up to 15 s.
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 15.0
ENDED = ("finished", "aborted")

logger = logging.getLogger(__name__)


class ArenaError(Exception):
    """An answer of the arena that the runner cannot use: its error body's code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code


class ClientBot:
    """Play every active match of the bot that ``token`` belongs to, with ``choose``."""

    def __init__(
        self,
        server: str,
        token: str,
        choose: Choose,
        *,
        silence: float = STREAM_SILENCE,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.choose = choose
        self.stopping = threading.Event()
        self._http = httpx.Client(
            base_url=server.rstrip("/") + API,
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(10.0, read=silence),
            transport=transport,
        )
        self._stream: httpx.Response | None = None
        self.name: str | None = None
        # The matches announced and not yet over; the ones seen to end, with their result.
        self.playing: set[int] = set()
        self.finished: dict[int, dict] = {}

    # -- the API ------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs) -> dict:
        response = self._http.request(method, path, **kwargs)
        if response.is_success:
            return response.json()
        raise _error(response, response.text)

    def whoami(self) -> str:
        """Return the name of the client bot the token belongs to."""
        found = self._request("GET", "/bots/", params={"account": "me"})["results"]
        if not found:
            raise SystemExit(
                "this token belongs to no client bot: register one with "
                '"kind": "client" and use the token it returned'
            )
        return found[0]["name"]

    def active_matches(self) -> list[int]:
        """Return the ids of the bot's matches in play (every page of the list)."""
        ids: list[int] = []
        params: dict | None = {"bot": self.name, "status": "active"}
        path = "/matches/"
        while path:
            page = self._request("GET", path, params=params)
            ids += [match["id"] for match in page["results"]]
            path, params = page.get("next"), None
        return ids

    def events(self) -> Iterator[dict]:
        """Yield the account stream's events (``{"event", "data"}``) until it ends."""
        with self._http.stream(
            "GET", EVENTS, headers={"Accept": "application/x-ndjson"}
        ) as response:
            if not response.is_success:
                raise _error(response, response.read().decode(errors="replace"))
            self._stream = response
            try:
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
            finally:
                self._stream = None

    def move(self, match_id: int, seat: int, ply: int, move: dict) -> dict:
        # One key per decision: a request retried after a network error is not played twice.
        return self._request(
            "POST",
            f"/matches/{match_id}/moves/",
            json={"ply": ply, "seat": seat, "move": move},
            headers={"Idempotency-Key": f"client-bot:{match_id}:{seat}:{ply}"},
        )

    # -- playing ------------------------------------------------------------------------

    def handle(self, event: dict) -> None:
        """Act on one event of the stream."""
        kind, data = event.get("event"), event.get("data") or {}
        if kind == "match_started":
            self.playing.add(data["match"])
            logger.info("match %s: playing seat(s) %s", data["match"], data["your_seats"])
        elif kind == "your_turn":
            match_id = data["match"]
            self.playing.add(match_id)
            move = self.choose(data["view"], data["legal_moves"])
            try:
                self.move(match_id, data["seat"], data["ply"], move)
            except ArenaError as exc:
                # Someone moved first or the match ended (409): the stream says what next.
                # An illegal move (400) is logged; the turn stays open until its deadline.
                logger.warning("match %s ply %s: %s", match_id, data["ply"], exc)
                if exc.status >= 500:
                    raise
        elif kind == "match_finished":
            match_id = data["match"]
            self.playing.discard(match_id)
            self.finished[match_id] = data
            logger.info(
                "match %s ended: %s, result %s", match_id, data["end_reason"], data["result"]
            )

    def run(self, *, until: Callable[[], bool] | None = None) -> None:
        """Play every match of the bot, new ones as they come, until stopped (Ctrl-C,
        ``stop()``, or ``until()`` turning true after an event)."""
        self.name = self.name or self.whoami()
        logger.info("playing as bot %s", self.name)
        backoff = BACKOFF_FIRST
        try:
            while not self.stopping.is_set() and not (until and until()):
                try:
                    for event in self.events():
                        backoff = BACKOFF_FIRST
                        if event.get("event") == "reconnect":
                            logger.info("the arena asks to reconnect")
                            break
                        self.handle(event)
                        if self.stopping.is_set() or (until and until()):
                            return
                except (httpx.TransportError, httpx.StreamError, ArenaError) as exc:
                    if self.stopping.is_set():
                        return
                    if isinstance(exc, ArenaError) and exc.status < 500 and exc.status != 429:
                        raise
                    logger.warning("event stream: %s; again in %.1f s", exc, backoff)
                    self.stopping.wait(backoff)
                    backoff = min(backoff * 2, BACKOFF_MAX)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def play_match(self, match_id: int) -> dict:
        """Play until ``match_id`` ends; return what the arena said of its end."""
        self.run(until=lambda: match_id in self.finished)
        return self.finished.get(match_id, {})

    def stop(self) -> None:
        """Stop: the open stream is closed, which ends ``run``."""
        self.stopping.set()
        stream = self._stream
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.close()
        self._http.close()


def _error(response: httpx.Response, text: str) -> ArenaError:
    try:
        error = response.json()["error"]
        code, message = error["code"], error["message"]
    except (ValueError, KeyError, TypeError, httpx.ResponseNotRead):
        code, message = "http_error", text[:200]
    return ArenaError(response.status_code, code, message)


def main(argv: list[str] | None = None) -> None:
    from bots.kit.serve import load_strategy

    parser = argparse.ArgumentParser(
        prog="python -m bots.kit.client",
        description="Play a client bot's matches through the arena's API.",
    )
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="the arena's URL")
    parser.add_argument("--token", default=os.environ.get(TOKEN_ENV), help=f"or ${TOKEN_ENV}")
    parser.add_argument("--strategy", default="greedy", help="built-in strategy (greedy)")
    parser.add_argument("--seed", type=int, help="seed of the strategy's random choices")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error(f"the bot's API token is required: --token or ${TOKEN_ENV}")
    try:
        choose = load_strategy(args.strategy, args.seed)
    except (KeyError, ValueError) as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    ClientBot(args.server, args.token, choose).run()


if __name__ == "__main__":
    main()
