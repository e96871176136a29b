"""Run a client bot: it plays through the arena's REST API with its own token.

    cardkit client greedy --server http://127.0.0.1:8000 --token T

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
opened again after a back-off (doubling from 0.5 s up to 15 s, each wait drawn at random
in its upper half, so that many bots do not come back in step); the arena then announces
the turns still open, and a turn answered twice is played once (the same Idempotency-Key).

Up to ``concurrency`` turns, each of another match, are thought about at once; every
turn played is logged on one line with the move and the time the bot took. A
``challenge`` event for the bot (its owner's policy is ``manual``) is answered by the
``ChallengeRules`` given, if any: ``POST /api/v1/challenges/<id>/accept/`` or
``decline/``. ``cardkit client --config FILE`` reads all of these from a TOML file
(``cardkit.client_config``).

A token the arena refuses, an arena that cannot be reached when the runner starts, and a
bot that gives no move or one that is not JSON stop the runner with ``RunnerError``, whose
message says what to do.

Your own bot needs one function::

    from cardkit.client import ClientBot

    def choose(view: dict, legal_moves: list[dict]) -> dict:
        return legal_moves[0]

    ClientBot("https://arena.example.org", "the token", choose).run()

Needs httpx, not Django.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx

from cardkit.client_config import BACKOFF_FIRST, BACKOFF_MAX, ChallengeRules
from cardkit.protocol import DEFAULT_TIME_LIMIT, BotFailed, answer_parts, build_request
from cardkit.server import Answer, Choose

# The token's variable, read by ``cardkit client`` when --token is not given.
TOKEN_ENV = "ARENA_BOT_TOKEN"
API = "/api/v1"
EVENTS = "/stream/events/"
# Seconds without a byte from the stream (the arena sends a keep-alive every 20) after
# which the connection is taken for dead and opened again.
STREAM_SILENCE = 45.0
ENDED = ("finished", "aborted")

logger = logging.getLogger(__name__)


class ArenaError(Exception):
    """An answer of the arena that the runner cannot use: its error body's code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code


class RunnerError(Exception):
    """A problem the runner cannot play past; the message names it and what to do."""


def backoff_waits(
    first: float = BACKOFF_FIRST, cap: float = BACKOFF_MAX, rng: random.Random | None = None
) -> Iterator[float]:
    """Yield the waits before each new try: the bound doubles from ``first`` up to ``cap``,
    and each wait is drawn in the bound's upper half ("equal jitter"), so bots that lost
    the arena together do not all knock again in the same instant."""
    rng = rng or random.Random()
    bound = first
    while True:
        yield rng.uniform(bound / 2, bound)
        bound = min(bound * 2, cap)


class ClientBot:
    """Play every active match of the bot that ``token`` belongs to, with ``choose``
    (or, for a bot that reads the whole request as an HTTP bot would, ``answer``)."""

    def __init__(
        self,
        server: str,
        token: str,
        choose: Choose | None,
        *,
        answer: Answer | None = None,
        silence: float = STREAM_SILENCE,
        transport: httpx.BaseTransport | None = None,
        concurrency: int = 1,
        challenges: ChallengeRules | None = None,
        backoff: tuple[float, float] = (BACKOFF_FIRST, BACKOFF_MAX),
    ) -> None:
        if (choose is None) == (answer is None):
            raise ValueError("a client bot needs choose(view, legal_moves) or answer(request)")
        self.answer: Answer = answer or (
            lambda request: choose(request["view"], request["legal_moves"])
        )
        self.server = server
        self.stopping = threading.Event()
        self._http = httpx.Client(
            base_url=server.rstrip("/") + API,
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(10.0, read=silence),
            transport=transport,
        )
        self._stream: httpx.Response | None = None
        self.name: str | None = None
        # The bot's challenge policy on the arena, as ``whoami`` found it.
        self.policy: str | None = None
        # The matches announced and not yet over; the ones seen to end, with their result.
        self.playing: set[int] = set()
        self.finished: dict[int, dict] = {}
        self.concurrency = concurrency
        self.challenges = challenges
        self.backoff = backoff
        # Turns are thought about in this pool, one match's turn per worker at a time; a
        # turn announced again (a stream reopened) while it is thought about is skipped.
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="cardkit-turn")
        self._thinking: set[tuple[int, int, int]] = set()
        self._lock = threading.Lock()
        self._failure: Exception | None = None

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
            raise RunnerError(
                "this token belongs to no client bot: register one with "
                '"kind": "client" and use the token it returned'
            )
        self.policy = found[0].get("challenge_policy")
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

    def challenge_answer(self, challenge_id: int, answer: str, reason: str = "") -> dict:
        """Accept or decline (``answer``) the challenge ``challenge_id`` sent to the bot."""
        body = {"reason": reason} if answer == "decline" else {}
        return self._request("POST", f"/challenges/{challenge_id}/{answer}/", json=body)

    def move(self, match_id: int, seat: int, ply: int, move: dict, comment: str = "") -> dict:
        # One key per decision: a request retried after a network error is not played twice.
        body = {"ply": ply, "seat": seat, "move": move}
        if comment:
            body["comment"] = comment
        return self._request(
            "POST",
            f"/matches/{match_id}/moves/",
            json=body,
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
            turn = (data["match"], data["seat"], data["ply"])
            with self._lock:
                self.playing.add(data["match"])
                if turn in self._thinking:
                    return
                self._thinking.add(turn)
            self._pool.submit(self._play_turn, data)
        elif kind == "challenge":
            self._answer_challenge(data)
        elif kind == "match_finished":
            match_id = data["match"]
            self.playing.discard(match_id)
            self.finished[match_id] = data
            logger.info(
                "match %s ended: %s, result %s", match_id, data["end_reason"], data["result"]
            )

    def _play_turn(self, data: dict) -> None:
        """Think about one turn and play it (in a worker of the pool); log it on one line."""
        match_id, seat, ply = data["match"], data["seat"], data["ply"]
        try:
            started = time.monotonic()
            move, comment = self._move_for(data)
            thought = time.monotonic() - started
            self.move(match_id, seat, ply, move, comment)
            logger.info(
                "match %s ply %s seat %s: %s, thought %.0f ms", match_id, ply, seat,
                json.dumps(move, separators=(",", ":"))[:120], thought * 1000,
            )  # fmt: skip
        except ArenaError as exc:
            # Someone moved first or the match ended (409): the stream says what next.
            # An illegal move (400) is logged; the turn stays open until its deadline.
            logger.warning("match %s ply %s: %s", match_id, ply, exc)
            if exc.status >= 500:
                self._reopen()
        except httpx.TransportError as exc:
            # The move may not have arrived: the reopened stream announces the turn again.
            logger.warning("match %s ply %s: %s", match_id, ply, exc)
            self._reopen()
        except Exception as exc:  # noqa: BLE001 - the runner stops with it, in run().
            self._failure = exc
            self.stop()
        finally:
            with self._lock:
                self._thinking.discard((match_id, seat, ply))

    def _reopen(self) -> None:
        """End the open stream, so that ``run`` opens it again after its back-off."""
        stream = self._stream
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.close()

    def _answer_challenge(self, challenge: dict) -> None:
        if self.challenges is None or challenge.get("status") != "pending":
            return
        if challenge.get("bot") != self.name:
            return
        with self._lock:
            busy = len(self.playing) >= self.concurrency
        decided = self.challenges.answer(challenge, bot=self.name, busy=busy)
        where = f"challenge {challenge['id']} from {challenge.get('challenger')}"
        if decided is None:
            logger.info("%s: left to the bot's owner (accept = manual)", where)
            return
        answer, reason = decided
        try:
            shown = self.challenge_answer(challenge["id"], answer, reason)
        except ArenaError as exc:
            # Cancelled or answered by the owner meanwhile (409): nothing left to do.
            logger.warning("%s: %s", where, exc)
            return
        if shown.get("match") is not None:
            # The match counts from now: its start is announced after the challenges the
            # stream holds already, which must find the bot busy when it is.
            with self._lock:
                self.playing.add(shown["match"])
        logger.info("%s: %sed%s", where, answer.removesuffix("e"), f" ({reason})" * bool(reason))

    def _warn_of_the_policy(self) -> None:
        """Say so when the arena answers the bot's challenges before the runner hears them:
        its rules only see those the owner's policy leaves to the bot (``manual``)."""
        rules = self.challenges
        if rules is None or rules.accept == "manual" or self.policy in (None, "manual"):
            return
        logger.warning(
            "the arena answers %s's challenges itself (its policy is %s): the runner's "
            "[challenge] rules apply only with the policy manual; its owner sets it with "
            "PATCH /api/v1/bots/%s/ {\"challenge_policy\": \"manual\"}",
            self.name, self.policy, self.name,
        )  # fmt: skip

    def _move_for(self, turn: dict) -> tuple[dict, str]:
        """Return the bot's move for a ``your_turn`` event and its comment (cut to the
        arena's limit, as an HTTP bot's is, rather than have the move refused for it);
        raise RunnerError for no move."""
        where = f"match {turn['match']} ply {turn['ply']}"
        try:
            move, comment = answer_parts(self.answer(turn_request(turn)))
        except BotFailed as exc:
            raise RunnerError(f"{where}: the bot gave no move ({exc}): fix the bot") from None
        try:
            json.dumps(move)
        except (TypeError, ValueError) as exc:
            raise RunnerError(
                f"{where}: the bot's move is not JSON ({exc}): return one of legal_moves "
                "as given"
            ) from None
        return move, comment

    def run(self, *, until: Callable[[], bool] | None = None) -> None:
        """Play every match of the bot, new ones as they come, until stopped (Ctrl-C,
        ``stop()``, or ``until()`` turning true after an event).

        Raise RunnerError when the token is refused, when the arena cannot be reached at
        the start (later, the runner waits for it to come back) or when the bot gives no
        move."""
        try:
            self.name = self.name or self.whoami()
        except httpx.TransportError as exc:
            self._finish()
            raise RunnerError(
                f"cannot reach the arena at {self.server} ({type(exc).__name__}: {exc}): "
                "start it, or give its URL with --server"
            ) from None
        except ArenaError as exc:
            self._finish()
            raise _refused(exc) from None
        logger.info("playing as bot %s", self.name)
        self._warn_of_the_policy()
        waits = backoff_waits(*self.backoff)
        try:
            while not self.stopping.is_set() and not (until and until()):
                try:
                    for event in self.events():
                        waits = backoff_waits(*self.backoff)
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
                        raise _refused(exc) from None
                    wait = next(waits)
                    logger.warning("event stream: %s; again in %.1f s", exc, wait)
                    self.stopping.wait(wait)
                else:
                    if self._failure is None and not self.stopping.is_set():
                        # The stream ended without an error (closed after a failed move).
                        self.stopping.wait(next(waits))
        except KeyboardInterrupt:
            pass
        finally:
            self._finish()
            # A turn's worker failed (the bot gave no move): the runner ends with its error.
            if self._failure is not None:
                raise self._failure

    def play_match(self, match_id: int) -> dict:
        """Play until ``match_id`` ends; return what the arena said of its end."""
        self.run(until=lambda: match_id in self.finished)
        return self.finished.get(match_id, {})

    def stop(self) -> None:
        """Stop: the open stream is closed, which ends ``run``; turns not yet begun are
        dropped. Safe from any thread, a turn's worker included."""
        self.stopping.set()
        self._reopen()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _finish(self) -> None:
        """Stop, let the turns being played end (their moves posted, their lines logged),
        then close the connections. From ``run``'s thread only: a worker cannot wait for
        itself."""
        self.stop()
        self._pool.shutdown(wait=True)
        self._http.close()


def _error(response: httpx.Response, text: str) -> ArenaError:
    try:
        error = response.json()["error"]
        code, message = error["code"], error["message"]
    except (ValueError, KeyError, TypeError, httpx.ResponseNotRead):
        code, message = "http_error", text[:200]
    return ArenaError(response.status_code, code, message)


def _refused(exc: ArenaError) -> Exception:
    """Return the error to stop on for an answer of the arena no retry will change."""
    if exc.status in (401, 403):
        return RunnerError(
            f"the arena refused the token ({exc}): give the token shown when the bot was "
            f"registered, with --token or ${TOKEN_ENV}"
        )
    return exc


def turn_request(turn: dict) -> dict:
    """Return the request an HTTP bot would get for a ``your_turn`` event of the stream
    (``cardkit.protocol.build_request``), so that any bot of the kit can play it."""
    view = turn["view"]
    now = datetime.now(UTC)
    # A match without a move clock has no deadline: the kit's default limit stands in.
    deadline = (
        datetime.fromisoformat(turn["deadline_at"])
        if turn.get("deadline_at")
        else now + timedelta(seconds=DEFAULT_TIME_LIMIT)
    )
    options = {"players": view.get("players")}
    if "deck_size" in view:
        options["deck_size"] = view["deck_size"]
    return build_request(
        match_id=turn["match"], game=view["game"], options=options, seat=turn["seat"],
        view=view, legal_moves=turn["legal_moves"], deadline=deadline,
        time_limit=max((deadline - now).total_seconds(), 0.0),
    )
