"""The kit's command: ``cardkit play`` (a local arena) and ``cardkit check`` (a protocol check).

    cardkit play --game durak --players 3 --bot mybot.py:choose --bot greedy --bot random \\
        --games 200 --duplicate --replays replays/
    cardkit check http://127.0.0.1:9001/ --secret S

(``python -m bots.kit`` is the same command.)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from bots.kit.serve import SECRET_ENV
from bots.protocol import DEFAULT_TIME_LIMIT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardkit", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play bots against each other on this machine")
    play.add_argument("--game", choices=["durak", "volynshchik"], default="durak")
    play.add_argument("--players", type=int, help="seats at the table (the game's default)")
    play.add_argument("--deck-size", type=int, help="Durak: 36 (default) or 32")
    play.add_argument(
        "--bot", action="append", required=True, metavar="BOT",
        help="a built-in (random, greedy, strong), file.py:function, module:function, "
        "an http:// URL, or cmd:COMMAND (JSON lines); once per seat",
    )
    play.add_argument("--games", type=int, default=100, help="decks to play (100)")
    play.add_argument(
        "--duplicate", action="store_true",
        help="play every deck once per rotation of the seats",
    )
    play.add_argument("--seed", default="0", help="seed of the decks (0)")
    play.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    play.add_argument("--secret", default=os.environ.get(SECRET_ENV), help="signs HTTP bots")
    play.add_argument("--replays", type=Path, help="write every deal's replay JSON here")

    check = commands.add_parser("check", help="check an HTTP bot as the arena would call it")
    check.add_argument("url")
    check.add_argument("--secret", default=os.environ.get(SECRET_ENV))
    check.add_argument(
        "--game", action="append", choices=["durak", "volynshchik"],
        help="the games the bot claims (both)",
    )
    check.add_argument("--deals", type=int, default=2, help="deals per table of each game (2)")
    check.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)

    args = parser.parse_args(argv)
    if args.command == "play":
        return _play(parser, args)
    return _check(parser, args)


def _play(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from bots.kit.arena import iter_deals, standings, write_replay
    from bots.kit.players import load_player

    options = {}
    if args.players is not None:
        options["players"] = args.players
    if args.deck_size is not None:
        options["deck_size"] = args.deck_size
    from games.engine import load_game

    try:
        seats = load_game(args.game, **options).players
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    if len(args.bot) != seats:
        parser.error(f"{seats} players sit at this table: give --bot {seats} times")
    if args.games < 1:
        parser.error("--games must be at least 1")
    players = []
    try:
        for spec in args.bot:
            players.append(load_player(spec, secret=args.secret))
    except (ValueError, OSError, ImportError) as exc:
        parser.error(str(exc))
    console = Console(stderr=True)
    total = args.games * (seats if args.duplicate else 1)
    names = _unique_names([player.name for player in players])
    deals = []
    try:
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeRemainingColumn(), console=console,
        ) as progress:
            task = progress.add_task(f"{args.game}, {seats} players", total=total)
            for deal in iter_deals(
                args.game, options, players, games=args.games, duplicate=args.duplicate,
                seed=args.seed, time_limit=args.time_limit,
            ):
                deals.append(deal)
                if args.replays is not None:
                    write_replay(deal, args.replays)
                if deal.fault is not None:
                    seat, fault, detail = deal.fault
                    progress.console.print(
                        f"deal {deal.number}: {names[deal.seating[seat]]} forfeits "
                        f"({fault}): {detail}"
                    )
                progress.advance(task)
    finally:
        for player in players:
            player.close()
    table = Table(title=f"{len(deals)} deals of {args.game} ({seats} players)")
    for column in ("bot", "deals", "lost", "loss rate", "95% interval", "draws", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in standings(deals, names):
        low, high = row.interval
        table.add_row(
            row.name, str(row.deals), str(row.losses), f"{row.loss_rate:.1%}",
            f"{low:.1%} – {high:.1%}", str(row.draws), str(row.faults),
        )
    Console().print(table)
    if args.replays is not None:
        console.print(f"replays in {args.replays}/ (open them at /replays/open/)")
    return 0


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if names.count(name) == 1 else f"{name} #{seen[name]}")
    return unique


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from bots.kit.check import check_bot, print_report

    if not args.secret:
        parser.error(f"the bot's secret is required: --secret or ${SECRET_ENV}")
    report = check_bot(
        args.url, args.secret, games=args.game or ["durak", "volynshchik"],
        deals=args.deals, time_limit=args.time_limit,
    )
    print_report(report, Console())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
