"""``cardkit play`` and ``cardkit sprt``: bots against each other on this machine, deal
after deal (``cardkit.arena``) or pair after pair until a sequential test decides
(``cardkit.sprt``), with a progress bar and a table or a verdict at the end.

``cardkit.cli`` parses the command line and runs these.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


class CommandError(Exception):
    """A problem the user can fix: the message names it and what to do."""


def play_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from cardkit.engine import load_game

    options = {}
    if args.players is not None:
        options["players"] = args.players
    if args.deck_size is not None:
        options["deck_size"] = args.deck_size
    try:
        seats = load_game(args.game, **options).players
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    if len(args.bot) != seats:
        parser.error(f"{seats} players sit at this table: give --bot {seats} times")
    if args.games < 1:
        parser.error("--games must be at least 1")
    return _with_players(
        parser, args, args.bot, lambda players: _play_deals(args, options, seats, players)
    )


def _with_players(parser: argparse.ArgumentParser, args: argparse.Namespace, specs: list,
                  run: Callable[[list], int]) -> int:  # fmt: skip
    """Load the players of ``specs``, check that each HTTP bot answers, and return what
    ``run`` returns for them; a bad spec or an unreachable bot is one line of ``parser``'s;
    every player is closed after."""
    from cardkit.specs import HttpPlayer, load_player

    players = []
    try:
        for spec in specs:
            players.append(load_player(spec, secret=args.secret))
        for player in players:
            if isinstance(player, HttpPlayer):
                bot_reach(player.name, args.secret, args.time_limit)
        return run(players)
    except (ValueError, OSError, ImportError) as exc:
        parser.error(str(exc))
    finally:
        for player in players:
            player.close()


def _play_deals(args: argparse.Namespace, options: dict, seats: int, players: list) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table

    from cardkit.arena import iter_deals, standings, write_replay

    console = Console(stderr=True)
    total = args.games * (seats if args.duplicate else 1)
    names = _unique_names([player.name for player in players])
    deals = []
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
                    f"({fault}): {detail}", markup=False, highlight=False, soft_wrap=True,
                )
            progress.advance(task)
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
    forfeits = sum(deal.fault is not None for deal in deals)
    if forfeits:
        # A bot that forfeits would lose on the arena the same way: a script should see it.
        raise CommandError(
            f"{forfeits} of {len(deals)} deals ended by a forfeit (the lines above say why): "
            "fix the bot that forfeits"
        )
    return 0


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if names.count(name) == 1 else f"{name} #{seen[name]}")
    return unique


def bot_reach(url: str, secret: str, time_limit: float) -> None:
    """Raise CommandError when the HTTP bot at ``url`` does not answer a signed ping."""
    from cardkit.check import unreachable

    problem = unreachable(url, secret, time_limit)
    if problem is not None:
        raise CommandError(problem)


def sprt_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from cardkit.engine import load_game
    from cardkit.sprt import SprtBounds

    options = {} if args.players is None else {"players": args.players}
    try:
        seats = load_game(args.game, **options).players
        bounds = SprtBounds(args.elo0, args.elo1, args.alpha, args.beta, args.model)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    if args.max_pairs < 1:
        parser.error("--max-pairs must be at least 1")
    specs = [args.candidate, args.baseline] + ([args.reference] if seats > 2 else [])
    return _with_players(
        parser, args, specs, lambda players: _sprt_pairs(args, options, bounds, players)
    )


def _sprt_pairs(args: argparse.Namespace, options: dict, bounds, players: list) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from cardkit.sprt import sprt_run

    console = Console(stderr=True)
    low, high = bounds.llr_bounds
    candidate, baseline, *reference = players
    state = None
    # The bar is the LLR's place between the bounds: empty at H0's, full at H1's.
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(),
        TextColumn("LLR {task.fields[llr]:+.2f} in [{task.fields[low]:.2f}, "
                   "{task.fields[high]:.2f}] · {task.fields[pairs]} pairs"),
        TimeElapsedColumn(), console=console,
    ) as progress:  # fmt: skip
        task = progress.add_task(
            f"{args.candidate} v {args.baseline}", total=high - low, completed=-low,
            llr=0.0, low=low, high=high, pairs=0,
        )
        for state in sprt_run(
            args.game, options, candidate, baseline, bounds=bounds, max_pairs=args.max_pairs,
            reference=reference[0] if reference else None, seed=args.seed,
            time_limit=args.time_limit,
        ):
            progress.update(
                task, completed=min(max(state.llr, low), high) - low, llr=state.llr,
                pairs=state.pairs,
            )
    estimate = state.estimate()
    verdict = {
        "H1": f"H1 accepted: {args.candidate} is better than {args.baseline} "
        f"(by {bounds.elo1:g} {bounds.model} Elo or more)",
        "H0": f"H0 accepted: {args.candidate} is not better than {args.baseline} "
        f"by {bounds.elo1:g} {bounds.model} Elo",
        "": f"no decision within {args.max_pairs} pairs (raise --max-pairs)",
    }[state.decision]
    print(verdict)
    print(
        f"pairs {state.pairs} ({2 * state.pairs} deals); counts 0/0.5/1/1.5/2: "
        f"{' '.join(map(str, state.counts))}; LLR {state.llr:+.2f} in [{low:.2f}, {high:.2f}]"
    )
    print(
        f"Elo {estimate.elo:+.1f} (95% interval {estimate.elo_low:+.1f} to "
        f"{estimate.elo_high:+.1f}); normalized Elo {estimate.nelo:+.1f}; "
        f"LOS {estimate.los:.1%}"
    )
    if state.faults:
        console.print(f"{state.faults} deals ended by a bot's fault (a forfeit, as on the arena)")
    return 0
