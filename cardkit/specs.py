"""The players of the local arena: a Python function, an HTTP bot, a command, a built-in.

``load_player(spec)`` reads one ``--bot`` argument:

- ``greedy``, ``random``, ``strong``: a built-in player (``cardkit.players``);
- ``mybot.py:choose`` or ``package.module:choose``: a Python ``choose(view, legal_moves)``;
- ``http://127.0.0.1:9001/`` (``--secret`` signs its requests): an HTTP bot, called as the
  server calls it (``cardkit.caller.BotCaller``);
- ``cmd:python3 mybot.py``: a program in any language that reads one request per line
  on stdin (the JSON the server POSTs) and writes one answer per line on stdout
  (``{"move": {...}}``);
- ``policy:policy.npz``: a policy trained with ``cardkit.rl`` and saved
  (``python -m cardkit.rl.example --save policy.npz``), played by ``cardkit.rl.policy``.

Every player is asked with the request of ``cardkit.protocol.move_request`` and answers a
``BotAnswer``: a move of ``legal_moves`` or the fault the server would forfeit it for.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from cardkit.protocol import BotAnswer, BotFailed, Fault, answer_parts, check_move

Choose = Callable[[dict, list[dict]], dict]
# A move request (cardkit.protocol.build_request) -> the bot's move, unchecked.
Answer = Callable[[dict], Any]
# What a bot argument may be, for the messages that refuse one.
KINDS = (
    "a built-in (random, greedy, strong), file.py:function, module:function, cmd:COMMAND "
    "or policy:FILE.npz"
)


class Player(Protocol):
    name: str

    def ask(self, request: dict, time_limit: float, rng: random.Random) -> BotAnswer:
        """Return the player's answer to one move request."""
        ...

    def close(self) -> None: ...


def _legal_answer(answer: Any, request: dict, started: float) -> BotAnswer:
    # A bot may return its move, or {"move": ..., "comment": ...} as an HTTP bot answers.
    move, comment = answer_parts(answer)
    moves = request["legal_moves"]
    # A player that hands back one of the listed moves (every built-in does) needs no
    # comparison of card sets.
    legal = next((m for m in moves if m is move), None) or check_move(move, moves)
    elapsed = time.monotonic() - started
    if legal is None:
        return BotAnswer(
            fault=Fault.ILLEGAL_MOVE, detail=f"not a legal move: {move!r}"[:200], elapsed=elapsed
        )
    return BotAnswer(move=legal, elapsed=elapsed, comment=comment)


class BuiltinPlayer:
    """A built-in player; its choices are seeded like the server's (``decision_rng``)."""

    def __init__(self, name: str) -> None:
        from cardkit.players import PLAYERS

        if name not in PLAYERS:
            raise ValueError(f"unknown built-in player {name!r}")
        self.name = name
        self._players: dict[str, Any] = {}

    def ask(self, request: dict, time_limit: float, rng: random.Random) -> BotAnswer:
        from cardkit.players import get_player

        game = request["game"]
        if game not in self._players:
            self._players[game] = get_player(self.name, game)
        started = time.monotonic()
        move = self._players[game].choose(request["view"], request["legal_moves"], rng)
        return _legal_answer(move, request, started)

    def close(self) -> None:
        pass


class FunctionPlayer:
    """A Python ``choose(view, legal_moves)`` returning a move, or ``{"move": move,
    "comment": "why"}`` (the HTTP answer's shape); an exception is a malformed answer."""

    def __init__(self, name: str, choose: Choose) -> None:
        self.name = name
        self._choose = choose

    def ask(self, request: dict, time_limit: float, rng: random.Random) -> BotAnswer:
        started = time.monotonic()
        try:
            move = self._choose(request["view"], request["legal_moves"])
        except Exception as exc:  # noqa: BLE001 - a bot's bug is its fault, not the arena's.
            return BotAnswer(
                fault=Fault.MALFORMED_RESPONSE,
                detail=f"{type(exc).__name__}: {exc}"[:200],
                elapsed=time.monotonic() - started,
            )
        answer = _legal_answer(move, request, started)
        if answer.ok and answer.elapsed > time_limit:
            return BotAnswer(fault=Fault.TIMEOUT, detail="answered late", elapsed=answer.elapsed)
        return answer

    def close(self) -> None:
        pass


class HttpPlayer:
    """An HTTP bot called exactly as the server calls it, signed with ``secret``."""

    def __init__(self, url: str, secret: str) -> None:
        from cardkit.caller import BotCaller

        self.name = url
        self._url = url
        self._secret = secret
        # The local arena talks to bots on this machine, which the server would refuse.
        self._caller = BotCaller(allow_private=True)

    def ask(self, request: dict, time_limit: float, rng: random.Random) -> BotAnswer:
        return self._caller.request_move(self._url, self._secret, request, time_limit)

    def close(self) -> None:
        self._caller.close()


class CommandPlayer:
    """A program speaking JSON lines: one request per line in, one answer per line out."""

    def __init__(self, command: str) -> None:
        self.name = command
        self._process = subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._lines: list[str] = []
        self._ready = threading.Condition()
        self._asking = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self._process.stdout:
            with self._ready:
                self._lines.append(line)
                self._ready.notify()
        with self._ready:
            self._lines.append("")
            self._ready.notify()

    def ask(self, request: dict, time_limit: float, rng: random.Random) -> BotAnswer:
        started = time.monotonic()
        try:
            move = self.move_for(request, time_limit)
        except BotFailed as exc:
            return BotAnswer(
                fault=exc.fault, detail=exc.detail, elapsed=time.monotonic() - started
            )
        return _legal_answer(move, request, started)

    def move_for(self, request: dict, time_limit: float | None = None) -> Any:
        """Return the program's move for ``request``, unchecked (``{"move": ...,
        "comment": ...}`` when its answer has a comment: ``answer_parts`` splits it);
        raise BotFailed when it answers no move. Thread-safe: one request at a time goes
        to the program."""
        if time_limit is None:
            time_limit = request["time_limit_ms"] / 1000
        with self._asking:
            try:
                self._process.stdin.write(json.dumps(request, separators=(",", ":")) + "\n")
                self._process.stdin.flush()
            except (BrokenPipeError, OSError) as exc:
                raise BotFailed(Fault.CONNECTION_ERROR, f"the program is gone: {exc}") from None
            with self._ready:
                if not self._ready.wait_for(lambda: self._lines, timeout=time_limit):
                    raise BotFailed(Fault.TIMEOUT, "no answer within the time limit")
                line = self._lines.pop(0)
        if not line:
            raise BotFailed(Fault.CONNECTION_ERROR, "the program exited")
        try:
            data = json.loads(line)
            move = data["move"]
        except (ValueError, KeyError, TypeError):
            raise BotFailed(
                Fault.MALFORMED_RESPONSE,
                f'an answer is one line of JSON {{"move": ...}}, not {line[:80]!r}',
            ) from None
        if data.get("comment"):
            return {"move": move, "comment": data["comment"]}
        return move

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def load_choose(spec: str) -> Choose:
    """Return the function named by ``path/to/file.py:name`` or ``module:name``."""
    where, _, attribute = spec.rpartition(":")
    if not where or not attribute:
        raise ValueError(f"{spec!r} is no bot: give {KINDS}")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise ValueError(f"no such file: {where}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules.setdefault(path.stem, module)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    choose = getattr(module, attribute, None)
    if not callable(choose):
        raise ValueError(f"{spec}: {attribute!r} is not a function of {where}")
    return choose


def load_player(spec: str, *, secret: str | None = None) -> Player:
    """Return the player a ``--bot`` argument names; raise ValueError for a bad one."""
    from cardkit.players import PLAYERS

    if spec in PLAYERS:
        return BuiltinPlayer(spec)
    if spec.startswith(("http://", "https://")):
        if not secret:
            raise ValueError(f"{spec}: an HTTP bot needs --secret to sign its requests")
        return HttpPlayer(spec, secret)
    if spec.startswith("cmd:"):
        return CommandPlayer(spec.removeprefix("cmd:"))
    if spec.startswith("policy:"):
        path = spec.removeprefix("policy:")
        return FunctionPlayer(f"policy:{Path(path).name}", load_policy_choose(path))
    where, _, attribute = spec.rpartition(":")
    return FunctionPlayer(f"{Path(where).name}:{attribute}", load_choose(spec))


def load_policy_choose(path: str) -> Choose:
    """Return the ``choose`` of the policy saved at ``path``; raise ValueError for a file
    that holds none."""
    from cardkit.rl.policy import load_policy

    return load_policy(path).choose


def load_bot(spec: str, *, seed: int | None = None) -> tuple[Answer, Callable[[], None]]:
    """Return ``(answer, close)`` for the bot that ``cardkit serve`` or ``cardkit client``
    runs: ``answer(request)`` returns its move as it gave it (the arena judges it; with a
    comment, ``{"move": ..., "comment": ...}``: ``answer_parts`` splits it) or raises
    BotFailed; ``close()`` ends a command bot's program. Raise ValueError (or
    ImportError, OSError) for an argument that names no bot."""
    from cardkit.players import PLAYERS
    from cardkit.serve import load_strategy

    if spec.startswith(("http://", "https://")):
        raise ValueError(f"{spec} is a bot that runs already; give a bot to run: {KINDS}")
    if spec.startswith("cmd:"):
        player = CommandPlayer(spec.removeprefix("cmd:"))
        return player.move_for, player.close
    if spec in PLAYERS:
        choose = load_strategy(spec, seed)
    elif spec.startswith("policy:"):
        choose = load_policy_choose(spec.removeprefix("policy:"))
    else:
        choose = load_choose(spec)
    return (lambda request: choose(request["view"], request["legal_moves"])), lambda: None
