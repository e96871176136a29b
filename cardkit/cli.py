"""The kit's command, ``cardkit``: everything a bot author runs.

    cardkit play --game durak --players 3 --bot mybot.py:choose --bot greedy --bot random \\
        --games 200 --duplicate --replays replays/
    cardkit serve mybot.py:choose --port 9001 --secret S     (an HTTP bot, on 127.0.0.1)
    cardkit check http://127.0.0.1:9001/ --secret S           (what the arena would see)
    cardkit client mybot.py:choose --server https://arena.example.org --token T
    cardkit client --config bot.toml                          (the same, from a TOML file)
    cardkit replay replays/deal-00001.json --out deal.html   (one HTML file, no server)
    cardkit sprt --candidate v2.py:choose --baseline v1.py:choose   (is v2 better?)
    cardkit --version

A bot is a built-in (random, greedy, strong), ``file.py:function`` or ``module:function``
(a Python ``choose(view, legal_moves)``), ``cmd:COMMAND`` (a program speaking JSON lines),
``policy:FILE.npz`` (a policy trained and saved with ``python -m cardkit.rl.example``)
or, for ``play``, an HTTP bot's URL. A problem the user can fix (a token or a secret
refused, a server or a bot out of reach, a move that is not JSON) ends the command with
one line on stderr naming it and what to do, and exit status 1; a usage error, 2.
(``python -m cardkit`` is the same command.) ``play`` and ``sprt`` live in
``cardkit.local_commands``; the other commands are here, with the parser.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from cardkit import __version__, local_commands
from cardkit.local_commands import CommandError, bot_reach
from cardkit.protocol import DEFAULT_TIME_LIMIT
from cardkit.serve import SECRET_ENV

GAMES = ["durak", "volynshchik"]
BOT_HELP = (
    "a built-in (random, greedy, strong), file.py:function, module:function, cmd:COMMAND "
    "or policy:FILE.npz (a trained policy)"
)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    from cardkit.client import RunnerError

    try:
        return args.run(parser, args)
    except (CommandError, RunnerError) as exc:
        print(f"cardkit {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardkit", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"cardkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play bots against each other on this machine")
    play.set_defaults(run=local_commands.play_command)
    play.add_argument("--game", choices=GAMES, default="durak")
    play.add_argument("--players", type=int, help="seats at the table (the game's default)")
    play.add_argument("--deck-size", type=int, help="Durak: 36 (default) or 32")
    play.add_argument(
        "--bot", action="append", required=True, metavar="BOT",
        help=f"{BOT_HELP}, or an HTTP bot's http:// URL; once per seat",
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

    serve = commands.add_parser("serve", help="run a bot as an HTTP bot the arena calls")
    serve.set_defaults(run=_serve)
    serve.add_argument("bot", metavar="BOT", help=BOT_HELP)
    serve.add_argument("--port", type=int, default=9001, help="port to listen on (9001)")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1; 0.0.0.0 for all)"
    )
    serve.add_argument("--secret", default=os.environ.get(SECRET_ENV), help=f"or ${SECRET_ENV}")
    serve.add_argument("--seed", type=int, help="seed of a built-in's random choices")

    check = commands.add_parser("check", help="check an HTTP bot as the arena would call it")
    check.set_defaults(run=_check)
    check.add_argument("url")
    check.add_argument("--secret", default=os.environ.get(SECRET_ENV), help=f"or ${SECRET_ENV}")
    check.add_argument(
        "--game", action="append", choices=GAMES, help="the games the bot claims (both)"
    )
    check.add_argument("--deals", type=int, default=2, help="deals per table of each game (2)")
    check.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)

    replay = commands.add_parser(
        "replay", help="write a replay as one HTML file that plays it (no server, no network)"
    )
    replay.set_defaults(run=_replay)
    replay.add_argument("file", type=Path, metavar="FILE.json", help="a replay JSON file")
    replay.add_argument(
        "--out", type=Path, help="the HTML file to write (FILE.html beside FILE.json)"
    )

    sprt = commands.add_parser(
        "sprt", help="is the candidate better? the server's sequential test, on paired deals here"
    )
    sprt.set_defaults(run=local_commands.sprt_command)
    sprt.add_argument("--candidate", required=True, metavar="BOT", help=BOT_HELP)
    sprt.add_argument("--baseline", required=True, metavar="BOT", help=BOT_HELP)
    sprt.add_argument("--game", choices=GAMES, default="durak")
    sprt.add_argument("--players", type=int, help="seats at the table (the game's default)")
    sprt.add_argument(
        "--reference", default="greedy", metavar="BOT",
        help="holds the other seats of a table of 3 or more (greedy)",
    )
    sprt.add_argument("--elo0", type=float, default=0.0, help="H0: not better by more (0)")
    sprt.add_argument("--elo1", type=float, default=20.0, help="H1: better by this much (20)")
    sprt.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (0.05)")
    sprt.add_argument("--beta", type=float, default=0.05, help="false H0 rate (0.05)")
    sprt.add_argument(
        "--model", choices=["normalized", "logistic"], default="normalized",
        help="the Elo scale of --elo0/--elo1 (normalized, as the server's default)",
    )
    sprt.add_argument("--max-pairs", type=int, default=2000, help="stop undecided here (2000)")
    sprt.add_argument("--seed", default="0", help="seed of the decks (0)")
    sprt.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    sprt.add_argument("--secret", default=os.environ.get(SECRET_ENV), help="signs HTTP bots")

    from cardkit.client import TOKEN_ENV

    client = commands.add_parser(
        "client", help="play a client bot's matches on an arena, through its account stream"
    )
    client.set_defaults(run=_client)
    client.add_argument("bot", metavar="BOT", nargs="?", help=f"{BOT_HELP} (or the file's bot)")
    client.add_argument(
        "--config", type=Path, metavar="FILE",
        help="a TOML file: server, token, bot, concurrency, [challenge], [reconnect] "
        "(cardkit.client_config); options given here win over it",
    )
    client.add_argument("--server", help="the arena's URL (http://127.0.0.1:8000)")
    client.add_argument("--token", help=f"the bot's API token (or ${TOKEN_ENV})")
    client.add_argument("--seed", type=int, help="seed of a built-in's random choices")
    client.add_argument(
        "--concurrency", type=int, help="matches played at once, their turns thought about "
        "at once (1)",
    )
    return parser


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from rich.console import Console

    from cardkit.check import check_bot, print_report

    if not args.secret:
        parser.error(f"the bot's secret is required: --secret or ${SECRET_ENV}")
    bot_reach(args.url, args.secret, args.time_limit)
    report = check_bot(
        args.url, args.secret, games=args.game or GAMES,
        deals=args.deals, time_limit=args.time_limit,
    )
    print_report(report, Console())
    return 0 if report.ok else 1


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from cardkit.server import make_server

    if not args.secret:
        parser.error(f"the bot's secret is required: --secret or ${SECRET_ENV}")
    answer, close = _load_bot(parser, args)
    try:
        try:
            server = make_server(None, args.port, args.secret, args.host, answer=answer)
        except OSError as exc:
            raise CommandError(
                f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}): "
                "give another --port, or stop what holds it"
            ) from None
        _log_to_stderr()
        host, port = server.server_address[:2]
        logging.getLogger("cardkit").info(
            "bot %s listening on http://%s:%s/; Ctrl-C stops it", args.bot, host, port
        )
        with server:
            server.serve_forever()
    finally:
        close()
    return 0


def _client(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from cardkit.client import TOKEN_ENV, ClientBot
    from cardkit.client_config import ClientConfig, ConfigError, config_load

    try:
        config = config_load(args.config) if args.config else ClientConfig()
    except ConfigError as exc:
        raise CommandError(exc) from None
    # The command line wins over the file, the file over the environment and defaults.
    args.bot = args.bot or config.bot
    args.token = args.token or config.token or os.environ.get(TOKEN_ENV)
    args.seed = config.seed if args.seed is None else args.seed
    server = args.server or config.server or "http://127.0.0.1:8000"
    concurrency = config.concurrency if args.concurrency is None else args.concurrency
    if not args.bot:
        parser.error("the bot to run is required: give BOT, or bot = ... in --config")
    if not args.token:
        parser.error(f"the bot's API token is required: --token, ${TOKEN_ENV} or --config")
    if not 1 <= concurrency <= 64:
        parser.error("--concurrency must be from 1 to 64")
    answer, close = _load_bot(parser, args)
    _log_to_stderr()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        ClientBot(
            server, args.token, None, answer=answer, concurrency=concurrency,
            challenges=config.challenge, backoff=(config.backoff_first, config.backoff_max),
        ).run()
    finally:
        close()
    return 0


def _load_bot(parser: argparse.ArgumentParser, args: argparse.Namespace):
    from cardkit.specs import load_bot

    try:
        return load_bot(args.bot, seed=args.seed)
    except (ValueError, OSError, ImportError) as exc:
        parser.error(str(exc))


def _replay(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from cardkit.replay import Replay, ReplayError

    try:
        replay = Replay.from_file(args.file)
    except OSError as exc:
        raise CommandError(f"cannot read {args.file} ({exc.strerror or exc})") from None
    except ReplayError as exc:
        raise CommandError(f"{args.file}: {exc}: give a replay JSON file") from None
    out = args.out or args.file.with_suffix(".html")
    try:
        replay.save_html(out)
    except OSError as exc:
        raise CommandError(f"cannot write {out} ({exc.strerror or exc})") from None
    print(f"{out}: {len(replay.document['steps']) - 1} moves; open it in a browser")
    return 0


def _log_to_stderr() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")


if __name__ == "__main__":
    sys.exit(main())
