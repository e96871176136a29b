"""Run a client bot: it plays through the arena's REST API with its own token.

    python -m bots.kit.client --server http://127.0.0.1:8000 --token T --strategy greedy

The token is the one shown when the bot was registered with ``"kind": "client"`` (it can
come from ``$ARENA_BOT_TOKEN`` instead). The runner asks the arena which bot the token
belongs to, then every few seconds lists the bot's active matches; each match gets a
thread that waits for the bot's turn with the long-poll endpoint and plays the move that
``choose(view, legal_moves)`` returns:

    GET  /api/v1/bots/?account=me                              which bot am I
    GET  /api/v1/matches/?bot=<name>&status=active             my matches in play
    GET  /api/v1/matches/<id>/wait/?after_ply=<n>&timeout=25   my view, once something changed
    POST /api/v1/matches/<id>/moves/  {"ply", "seat", "move"}  with an Idempotency-Key

Your own bot needs one function::

    from bots.kit.client import ClientBot

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        return legal_moves[0]

    ClientBot("https://arena.example.org", "the token", choose).run()

Needs httpx, not Django.
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
from collections.abc import Callable

import httpx

from bots.kit.server import Choose

TOKEN_ENV = "ARENA_BOT_TOKEN"
API = "/api/v1"
# Seconds a long-poll may wait at the server (its maximum is 30), and the client's read
# timeout on top of that.
WAIT_TIMEOUT = 25.0
READ_MARGIN = 10.0
# Seconds between two looks for new matches.
DISCOVER_EVERY = 3.0
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
        wait_timeout: float = WAIT_TIMEOUT,
        discover_every: float = DISCOVER_EVERY,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.choose = choose
        self.wait_timeout = wait_timeout
        self.discover_every = discover_every
        self.stopping = threading.Event()
        self._http = httpx.Client(
            base_url=server.rstrip("/") + API,
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(10.0, read=wait_timeout + READ_MARGIN),
            transport=transport,
        )
        self._threads: dict[int, threading.Thread] = {}
        self.name: str | None = None
        # Ids of the matches this runner saw end, with their result, for callers and logs.
        self.finished: dict[int, dict] = {}

    # -- the API ------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs) -> dict:
        response = self._http.request(method, path, **kwargs)
        if response.is_success:
            return response.json()
        try:
            error = response.json()["error"]
            code, message = error["code"], error["message"]
        except (ValueError, KeyError, TypeError):
            code, message = "http_error", response.text[:200]
        raise ArenaError(response.status_code, code, message)

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

    def wait(self, match_id: int, after_ply: int | None) -> dict:
        params: dict = {"timeout": self.wait_timeout}
        if after_ply is not None:
            params["after_ply"] = after_ply
        return self._request("GET", f"/matches/{match_id}/wait/", params=params)

    def move(self, match_id: int, seat: int, ply: int, move: dict) -> dict:
        # One key per decision: a request retried after a network error is not played twice.
        return self._request(
            "POST",
            f"/matches/{match_id}/moves/",
            json={"ply": ply, "seat": seat, "move": move},
            headers={"Idempotency-Key": f"client-bot:{match_id}:{seat}:{ply}"},
        )

    # -- playing ------------------------------------------------------------------------

    def play_match(self, match_id: int) -> dict:
        """Play the match until it ends; return its last view."""
        after_ply = None
        backoff = BACKOFF_FIRST
        while not self.stopping.is_set():
            try:
                view = self.wait(match_id, after_ply)
                if view["status"] in ENDED:
                    self.finished[match_id] = view
                    logger.info(
                        "match %s ended: %s, result %s",
                        match_id,
                        view["end_reason"],
                        view["result"],
                    )
                    return view
                if view["your_turn"]:
                    move = self.choose(view["view"], view["legal_moves"])
                    try:
                        self.move(match_id, view["seat"], view["ply"], move)
                    except ArenaError as exc:
                        # Someone moved first or the match ended (409): read it again.
                        # An illegal move (400) is logged, and asked again a little later.
                        logger.warning("match %s ply %s: %s", match_id, view["ply"], exc)
                        if exc.status < 500 and exc.status != 409:
                            self.stopping.wait(1.0)
                after_ply = view["ply"]
                backoff = BACKOFF_FIRST
            except (httpx.TransportError, ArenaError) as exc:
                if isinstance(exc, ArenaError) and exc.status < 500:
                    raise
                logger.warning("match %s: %s; retrying in %.1f s", match_id, exc, backoff)
                self.stopping.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
        return {}

    def _play_in_thread(self, match_id: int) -> None:
        try:
            self.play_match(match_id)
        except Exception:
            logger.exception("match %s: the runner gave up on it", match_id)

    def run(self, *, until: Callable[[], bool] | None = None) -> None:
        """Play every match of the bot, new ones as they come, until stopped (Ctrl-C,
        ``stop()``, or ``until()`` turning true)."""
        self.name = self.name or self.whoami()
        logger.info("playing as bot %s", self.name)
        backoff = BACKOFF_FIRST
        try:
            while not self.stopping.is_set() and not (until and until()):
                try:
                    for match_id in self.active_matches():
                        thread = self._threads.get(match_id)
                        if (
                            thread is None
                            or not thread.is_alive()
                            and match_id not in (self.finished)
                        ):
                            thread = threading.Thread(
                                target=self._play_in_thread,
                                args=(match_id,),
                                name=f"match-{match_id}",
                                daemon=True,
                            )
                            self._threads[match_id] = thread
                            thread.start()
                    backoff = BACKOFF_FIRST
                    self.stopping.wait(self.discover_every)
                except (httpx.TransportError, ArenaError) as exc:
                    logger.warning("listing matches: %s; retrying in %.1f s", exc, backoff)
                    self.stopping.wait(backoff)
                    backoff = min(backoff * 2, BACKOFF_MAX)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop looking for matches and let the match threads end (within one long-poll)."""
        self.stopping.set()
        for thread in list(self._threads.values()):
            thread.join(self.wait_timeout + READ_MARGIN)
        self._http.close()


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
