"""The client runner's configuration file (TOML), as lichess-bot's ``config.yml``.

    cardkit client --config bot.toml

    server = "https://arena.example.org"
    token = "the token shown when the bot was registered"   # or $ARENA_BOT_TOKEN
    bot = "mybot.py:choose"          # any bot of cardkit serve: greedy, policy:FILE.npz, ...
    concurrency = 2                  # matches played at once (turns thought about at once)
    seed = 1                         # a built-in's random choices

    [challenge]                      # how the bot itself answers a challenge it is sent
    accept = "builtin_only"          # all | builtin_only | none | manual (its owner answers)
    games = ["durak"]                # any other game is declined
    max_players = 3
    min_time_limit = 1.0             # seconds per move
    max_time_limit = 30.0

    [reconnect]                      # back-off after a dropped stream or a restarted arena
    first = 0.5                      # seconds: the first wait, doubled after each failure,
    max = 15.0                       # up to this; each wait is drawn in [w/2, w] (jitter)

Options given on the command line win over the file. Paths (``mybot.py:choose``,
``policy:FILE``) are read from the current directory, as on the command line. A file the
runner cannot use raises ConfigError with one line that names the file, the key and what
is wrong with it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ACCEPT = ("all", "builtin_only", "none", "manual")
GAMES = ("durak", "volynshchik")
BUILTIN_BOTS = ("random", "greedy", "strong")
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 15.0


class ConfigError(ValueError):
    """A configuration file the runner cannot use; the message is one line."""


@dataclass(frozen=True)
class ChallengeRules:
    """How the runner answers a challenge sent to its bot (the arena asks the bot when its
    owner's policy is ``manual``)."""

    accept: str = "manual"
    games: tuple[str, ...] = ()
    max_players: int | None = None
    min_time_limit: float | None = None
    max_time_limit: float | None = None

    def answer(self, challenge: dict, *, bot: str, busy: bool) -> tuple[str, str] | None:
        """Return ``("accept" or "decline", reason)`` for a pending ``challenge`` (as the
        ``challenge`` event shows it) to ``bot``, or None to leave it to the bot's owner.
        ``busy``: the bot plays as many matches as it may at once."""
        if self.accept == "manual":
            return None
        if self.accept == "none":
            return "decline", f"{bot} takes no challenges."
        if self.games and challenge.get("game") not in self.games:
            return "decline", f"{bot} plays {', '.join(self.games)} only."
        if self.max_players is not None and challenge.get("players", 0) > self.max_players:
            return "decline", f"{bot} plays at tables of {self.max_players} or fewer."
        limit = challenge.get("move_time_limit")
        if limit is not None and (
            (self.min_time_limit is not None and limit < self.min_time_limit)
            or (self.max_time_limit is not None and limit > self.max_time_limit)
        ):
            return "decline", f"{bot} plays with {self._limits()} a move."
        if self.accept == "builtin_only":
            others = [seat for seat in challenge.get("seats", []) if seat.get("bot") != bot]
            if not all(_builtin(seat) for seat in others):
                return "decline", f"{bot} plays against built-in bots only."
        if busy:
            return "decline", f"{bot} is busy: it plays as many matches as it may at once."
        return "accept", ""

    def _limits(self) -> str:
        low, high = self.min_time_limit, self.max_time_limit
        if low is not None and high is not None:
            return f"{low:g} to {high:g} s"
        return f"at least {low:g} s" if low is not None else f"at most {high:g} s"


def _builtin(seat: dict) -> bool:
    """Whether a challenge's seat is a built-in bot's: as the arena says (the seat's
    ``kind``), else by the built-ins' names."""
    if "kind" in seat:
        return seat["kind"] == "builtin"
    return seat.get("bot") in BUILTIN_BOTS


@dataclass(frozen=True)
class ClientConfig:
    server: str | None = None
    token: str | None = None
    bot: str | None = None
    concurrency: int = 1
    seed: int | None = None
    challenge: ChallengeRules = field(default_factory=ChallengeRules)
    backoff_first: float = BACKOFF_FIRST
    backoff_max: float = BACKOFF_MAX


# key: (type, check or None, what a good value is)
_TOP = {
    "server": (str, lambda v: v.startswith(("http://", "https://")), "an http(s):// URL"),
    "token": (str, bool, "the bot's API token"),
    "bot": (str, bool, "a bot: greedy, mybot.py:choose, policy:FILE.npz, cmd:COMMAND"),
    "concurrency": (int, lambda v: 1 <= v <= 64, "a whole number from 1 to 64"),
    "seed": (int, None, "a whole number"),
}
_CHALLENGE = {
    "accept": (str, lambda v: v in ACCEPT, f"one of {', '.join(ACCEPT)}"),
    "games": (list, lambda v: all(g in GAMES for g in v), f"a list of {', '.join(GAMES)}"),
    "max_players": (int, lambda v: 2 <= v <= 5, "a whole number from 2 to 5"),
    "min_time_limit": (float, lambda v: v > 0, "seconds, more than 0"),
    "max_time_limit": (float, lambda v: v > 0, "seconds, more than 0"),
}
_RECONNECT = {
    "first": (float, lambda v: 0 < v <= 60, "seconds, more than 0 and at most 60"),
    "max": (float, lambda v: 0 < v <= 600, "seconds, more than 0 and at most 600"),
}


def _checked(where: str, table: dict, keys: dict) -> dict[str, Any]:
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (the keys are {', '.join(keys)})"
        )
    values = {}
    for key, value in table.items():
        kind, check, good = keys[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool) or (
            check is not None and not check(value)
        ):
            raise ConfigError(f"{where}: {key} = {value!r} is not {good}")
        values[key] = tuple(value) if kind is list else value
    return values


def config_load(path: str | Path) -> ClientConfig:
    """Return the configuration in the TOML file at ``path``; raise ConfigError (one line
    naming the file and the key) for a file that is missing, not TOML or holds a wrong key
    or value."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text: write it as TOML") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not TOML: {exc}") from None
    tables = {"challenge": _CHALLENGE, "reconnect": _RECONNECT}
    top = _checked(
        str(path), {k: v for k, v in document.items() if k not in tables}, _TOP
    )
    sections = {}
    for name, keys in tables.items():
        section = document.get(name, {})
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: {name} is a table: write [{name}] and its keys under it")
        sections[name] = _checked(f"{path} [{name}]", section, keys)
    rules = ChallengeRules(**sections["challenge"])
    if (rules.min_time_limit or 0) > (rules.max_time_limit or float("inf")):
        raise ConfigError(f"{path} [challenge]: min_time_limit is above max_time_limit")
    reconnect = sections["reconnect"]
    first = reconnect.get("first", BACKOFF_FIRST)
    cap = reconnect.get("max", max(BACKOFF_MAX, first))
    if first > cap:
        raise ConfigError(f"{path} [reconnect]: first = {first:g} is above max = {cap:g}")
    return ClientConfig(**top, challenge=rules, backoff_first=first, backoff_max=cap)
