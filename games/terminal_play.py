"""Play a deal in a terminal against built-in random players: the engine, words, and input.

Kept apart from the management command so it stays free of Django and easy to test.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from cardkit.engine import IllegalMove, load_game
from cardkit.engine.cards import SUIT_SYMBOLS

HELP = {
    "durak": (
        "moves: the number of a listed move; or 'attack 8C 8D', 'beat 8C:9C 8D:6S' "
        "(attack card:covering card), 'take'; 'help', 'quit'"
    ),
    "volynshchik": (
        "moves: the number of a listed move; or 'lead QS', 'cover KS', 'take', 'declare'; "
        "'help', 'quit'"
    ),
}


def pretty(card: str) -> str:
    return card[0].replace("T", "10") + SUIT_SYMBOLS[card[1]]


def describe(move: dict) -> str:
    """Return a move in words, e.g. "beats 8♣ with 9♣"."""
    kind = move["type"]
    if kind == "attack":
        return "attacks with " + " ".join(pretty(c) for c in move["cards"])
    if kind == "beat":
        return "beats " + ", ".join(f"{pretty(a)} with {pretty(b)}" for a, b in move["covers"])
    if kind == "take":
        return "takes"
    if kind == "declare":
        return "declares a trump"
    return f"{'leads' if kind == 'lead' else 'covers with'} {pretty(move['card'])}"


def parse(text: str, legal: list[dict]) -> dict:
    """Return the move ``text`` stands for; raise ValueError with a message for the player."""
    text = text.strip()
    words = text.replace(",", " ").split()
    if not words:
        raise ValueError("type a move, or 'help'")
    if words[0].isdigit():
        number = int(words[0])
        if not 1 <= number <= len(legal):
            raise ValueError(f"choose a number from 1 to {len(legal)}")
        return legal[number - 1]
    kind, args = words[0].lower(), [w.upper() for w in words[1:]]
    if kind == "attack":
        return {"type": "attack", "cards": args}
    if kind == "beat":
        covers = []
        for arg in args:
            if ":" not in arg:
                raise ValueError("write each cover as attack card:covering card, e.g. 8C:9C")
            covers.append(arg.split(":", 1))
        return {"type": "beat", "covers": covers}
    if kind in ("lead", "cover"):
        if len(args) != 1:
            raise ValueError(f"{kind} takes exactly one card, e.g. '{kind} QS'")
        return {"type": kind, "card": args[0]}
    if kind in ("take", "declare") and not args:
        return {"type": kind}
    raise ValueError(f"not a move: {text!r}")


def table_lines(view: dict) -> list[str]:
    cards = lambda cs: " ".join(pretty(c) for c in cs) or "-"  # noqa: E731
    lines = []
    if view["game"] == "durak":
        lines.append(
            f"trump {pretty(view['trump_card'])}   talon {view['talon_size']}   "
            f"discard {len(view['discard'])}   hands {view['hand_sizes']}"
        )
        if view["table"]:
            lines.append(f"on the table: {cards(view['table'])} (seat {view['attacker']} attacks)")
    else:
        declared = {p: s for p, s in enumerate(view["declared"]) if s}
        lines.append(
            f"pile {cards(view['pile'])}   hands {view['hand_sizes']}   "
            f"your reserve {pretty(view['reserve'])}   trumps declared {declared or '-'}"
        )
    lines.append(f"your hand: {cards(view['hand'])}")
    return lines


def play_in_terminal(
    game_name: str,
    *,
    players: int,
    deck_size: int | None,
    seat: int,
    seed: int | None,
    read: Callable[[str], str],
    write: Callable[[str], None],
) -> dict | None:
    """Play one deal with a person at ``seat``; return the result, or None if they quit."""
    options = {"players": players}
    if deck_size:
        options["deck_size"] = deck_size
    game = load_game(game_name, **options)
    seed = seed if seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    state = game.deal(seed=seed, dealer=(seat - 1) % players)
    write(f"{game_name}, {players} players, you are seat {seat}; seed {seed}. "
          + HELP[game_name])
    while not state.is_over:
        mover = state.to_move
        if mover != seat:
            move = rng.choice(state.legal_moves())
            write(f"seat {mover} {describe(move)}")
            state = state.play(move)
            continue
        view = state.view(seat)
        for line in table_lines(view):
            write(line)
        legal = state.legal_moves()
        for number, move in enumerate(legal, 1):
            write(f"  {number:>2}. {describe(move)}")
        while True:
            try:
                text = read("your move> ")
            except EOFError:
                return None
            if text.strip().lower() in ("quit", "exit", "q"):
                return None
            if text.strip().lower() == "help":
                write(HELP[game_name])
                continue
            try:
                state = state.play(parse(text, legal))
                break
            except (ValueError, IllegalMove) as exc:
                write(f"! {exc}")
    result = state.result
    if result["loser"] is None:
        write("The deal is drawn.")
    elif result["loser"] == seat:
        write("You are the fool: you lost the deal.")
    else:
        write(f"Seat {result['loser']} lost the deal; you are out safe.")
    write(f"Order of going out: {result['out_order']}")
    return result
