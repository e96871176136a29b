"""The protocol checker: what the arena would do with an HTTP bot, before it is registered.

``check_bot(url, secret)`` pings the bot, plays it through a few deals of every table of
each game it claims (against built-in ``random`` players) with the requests and the caller
the arena uses (``cardkit.protocol``), and sends it the requests a bot must refuse: unsigned,
wrongly signed, stale, and a replay of one it answered. A fault the arena would forfeit
the bot for (the names of ``cardkit.protocol.Fault``, listed in docs/bot-protocol.md) fails
the check; a request the bot should have refused is a warning (the arena never sends one,
but anyone on the network could).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from cardkit.arena import deal_seed, play_deal, request_options
from cardkit.caller import BotCaller
from cardkit.engine import load_game
from cardkit.protocol import (
    DEFAULT_TIME_LIMIT,
    FRESHNESS_WINDOW,
    MAX_RESPONSE_BYTES,
    BotAnswer,
    Fault,
    move_request,
    signed_headers,
)
from cardkit.serve import SECRET_ENV
from cardkit.specs import BuiltinPlayer, HttpPlayer

OK, WARN, FAIL = "ok", "warn", "fail"

# The tables of each game a bot is checked at: (players, deck size).
TABLES: dict[str, list[dict[str, int]]] = {
    "durak": [
        {"players": 2}, {"players": 3}, {"players": 4}, {"players": 2, "deck_size": 32},
    ],
    "volynshchik": [{"players": players} for players in (2, 3, 4, 5)],
}


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str


@dataclass
class Report:
    """Every check made, and the answer times of the moves played."""

    url: str
    checks: list[Check] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the arena would not forfeit the bot for anything seen."""
        return all(check.status != FAIL for check in self.checks)

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append(Check(name, status, detail))


class _Timed:
    """The arena's HTTP player, keeping the time of every answer."""

    def __init__(self, inner: HttpPlayer, times: list[float]) -> None:
        self.inner, self.name, self.times = inner, inner.name, times

    def ask(self, request: dict, time_limit: float, rng: Any) -> BotAnswer:
        answer = self.inner.ask(request, time_limit, rng)
        self.times.append(answer.elapsed)
        return answer

    def close(self) -> None:
        self.inner.close()


def unreachable(url: str, secret: str, time_limit: float = DEFAULT_TIME_LIMIT) -> str | None:
    """Return why the bot at ``url`` cannot be played at all (out of reach, or refusing the
    signature of ``secret``), naming what to do; None when it answers a signed ping (or
    fails it otherwise, which the check reports)."""
    with BotCaller(allow_private=True) as caller:
        ping = caller.ping(url, secret, time_limit)
    if ping.fault in (Fault.CONNECTION_ERROR, Fault.UNSAFE_URL):
        return (
            f"cannot reach the bot at {url} ({ping.detail}): start it "
            "(cardkit serve BOT --port PORT --secret S) or check the URL"
        )
    if ping.fault is Fault.TIMEOUT:
        return (
            f"the bot at {url} did not answer a ping within {time_limit:g} s: is it "
            "stuck, or is the URL another server's?"
        )
    if ping.fault is Fault.HTTP_STATUS and ping.detail in ("HTTP 401", "HTTP 403"):
        return (
            f"the bot at {url} refused the signature ({ping.detail}): give the secret it "
            f"was started with, with --secret or ${SECRET_ENV}"
        )
    return None


def check_bot(
    url: str,
    secret: str,
    *,
    games: list[str] | tuple[str, ...] = ("durak", "volynshchik"),
    deals: int = 2,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> Report:
    """Check the bot at ``url`` as the arena would call it; return the report."""
    report = Report(url)
    with BotCaller(allow_private=True) as caller:
        ping = caller.ping(url, secret, time_limit)
        if ping.ok:
            report.add("ping", OK, f'{{"pong": true}} in {ping.elapsed * 1000:.0f} ms')
        else:
            report.add("ping", FAIL, f"{ping.fault}: {ping.detail}")
    player = _Timed(HttpPlayer(url, secret), report.times)
    try:
        for game in games:
            for options in TABLES[game]:
                _check_table(report, player, game, options, deals, time_limit)
    finally:
        player.close()
    if report.times:
        slowest = max(report.times)
        median = statistics.median(report.times)
        status = WARN if slowest > time_limit * 0.8 else OK
        report.add(
            "answer times", status,
            f"median {median * 1000:.0f} ms, slowest {slowest * 1000:.0f} ms of "
            f"{len(report.times)} (limit {time_limit * 1000:.0f} ms)",
        )
    _check_refusals(report, url, secret, time_limit)
    return report


def _check_table(
    report: Report, player: _Timed, game: str, options: dict, deals: int, time_limit: float
) -> None:
    seats = load_game(game, **options).players
    table = f"{game}, {seats} players" + (
        f", {options['deck_size']} cards" if "deck_size" in options else ""
    )
    others = [BuiltinPlayer("random") for _ in range(seats - 1)]
    moves = 0
    for number in range(deals):
        # The bot sits in every seat in turn: each seat's first request differs.
        seat = number % seats
        seating = tuple((s - seat) % seats for s in range(seats))
        deal = play_deal(
            game, options, [player, *others], seating=seating,
            seed=deal_seed(f"check:{table}", number), number=number + 1, time_limit=time_limit,
        )
        if deal.fault is not None and deal.seating[deal.fault[0]] == 0:
            _, fault, detail = deal.fault
            report.add(table, FAIL, f"forfeit at move {len(deal.log) + 1}: {fault}: {detail}")
            return
        moves += sum(deal.seating[entry.seat] == 0 for entry in deal.log)
    report.add(table, OK, f"{deals} deals, {moves} legal moves")


def _check_refusals(report: Report, url: str, secret: str, time_limit: float) -> None:
    import httpx

    game = load_game("durak", players=2)
    state = game.deal(seed=deal_seed("check:refusals", 0))
    request = move_request(
        state=state, match_id=0, game="durak",
        options=request_options("durak", {"players": 2}), time_limit=time_limit,
    )
    body = json.dumps(request, separators=(",", ":")).encode()
    good = signed_headers(secret, body)
    wrong = signed_headers(secret + "-not", body)
    stale = signed_headers(secret, body, now=time.time() - 2 * FRESHNESS_WINDOW - 5)
    kinds = {"Content-Type": "application/json"}
    with httpx.Client(timeout=time_limit, follow_redirects=False, trust_env=False) as client:

        def post(headers: dict[str, str]) -> httpx.Response | None:
            try:
                return client.post(url, content=body, headers={**kinds, **headers})
            except httpx.HTTPError:
                return None

        first = post(good)
        if first is not None and first.is_success:
            size = len(first.content)
            status = OK if size <= MAX_RESPONSE_BYTES else FAIL
            report.add("answer size", status, f"{size} bytes (limit {MAX_RESPONSE_BYTES})")
        for name, headers in (
            ("refuses a replayed request", good),
            ("refuses an unsigned request", {}),
            ("refuses a wrong signature", wrong),
            ("refuses a stale request", stale),
        ):
            response = post(headers)
            if response is None or not response.is_success:
                answer = "no answer" if response is None else f"HTTP {response.status_code}"
                report.add(name, OK, answer)
            else:
                report.add(
                    name, WARN,
                    f"HTTP {response.status_code}: the bot answered a request it should refuse",
                )


def print_report(report: Report, console: Any) -> None:
    """Print the report as a table on a rich ``console``."""
    from rich.table import Table

    marks = {OK: "[green]ok[/]", WARN: "[yellow]warn[/]", FAIL: "[red]FAIL[/]"}
    table = Table(title=f"cardkit check {report.url}")
    table.add_column("check")
    table.add_column("")
    table.add_column("what the arena saw")
    for check in report.checks:
        table.add_row(check.name, marks[check.status], check.detail)
    console.print(table)
    verdict = "the arena would play this bot" if report.ok else "the arena would forfeit this bot"
    console.print(verdict)
