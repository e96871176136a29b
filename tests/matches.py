"""Helpers for tests of matches: clients with tokens, matches started, hidden cards.

Imported by the tests of ``tests/api`` and ``tests/games``; fixtures wrapping them live in
their ``conftest.py``.
"""

from __future__ import annotations

import random
import re
import time

from rest_framework.test import APIClient

from accounts.tokens import token_create
from cardkit.engine.cards import deck_cards
from games.models import Match
from games.move_services import match_move_submit
from games.seating import SeatHolder
from games.selectors import match_state
from games.services import match_create


def token_client(user) -> APIClient:
    """Return an API client authenticated as ``user`` with its token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


def start_match(users: list, *, game: str = "durak", **options) -> Match:
    """Create and start a match with ``users`` in its seats, in order."""
    return match_create(
        creator=users[0],
        game=game,
        players=len(users),
        seats=[SeatHolder(user=user) for user in users],
        **options,
    )


def wait_while_active(match: Match, timeout: float = 60) -> Match:
    """Reload ``match`` until it is no longer active, for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match.refresh_from_db()
        if match.status != Match.Status.ACTIVE:
            break
        time.sleep(0.2)
    return match


def play_random_moves(
    match: Match, count: int, *, seed: int = 0, telling: bool = False
) -> Match:
    """Play up to ``count`` random legal moves through the service; return the match.

    ``telling``: each move's comment names the mover's hand, the most a bot's comment can
    give away (the leak tests look for those cards wherever a reader may not see them)."""
    rng = random.Random(seed)
    for _ in range(count):
        match.refresh_from_db()
        if match.status != Match.Status.ACTIVE:
            break
        state = match_state(match)
        match_move_submit(
            match_id=match.pk,
            seat=match.to_move,
            ply=match.ply,
            move=rng.choice(state.legal_moves()),
            comment=_hand_told(state, match.to_move) if telling else "",
        )
    match.refresh_from_db()
    return match


def _hand_told(state, seat: int) -> str:
    return "I hold " + " ".join(state.view(seat)["hand"])


def play_to_the_middle(match: Match, *, seed: int = 0, telling: bool = False) -> Match:
    """Play random moves until the match is well under way but not over.

    Durak: until the first refill has happened and the talon still holds cards; Volynshchik:
    a dozen moves. Raise if the match ends first (choose another seed).
    """
    rng = random.Random(seed)
    for _ in range(400):
        match.refresh_from_db()
        assert match.status == Match.Status.ACTIVE, "the match ended before its middle"
        state = match_state(match)
        full = state.reveal()
        if match.game == "durak":
            if len(full["discard"]) >= 4 and full["talon_size"] >= 4 and not full["table"]:
                return match
        elif match.ply >= 12 and full["phase"] == "respond":
            return match
        match_move_submit(
            match_id=match.pk,
            seat=match.to_move,
            ply=match.ply,
            move=rng.choice(state.legal_moves()),
            comment=_hand_told(state, match.to_move) if telling else "",
        )
    raise AssertionError("no middle position found")


def hidden_cards(match: Match, observer: int | None) -> set[str]:
    """Return the cards ``observer`` (a seat, or None for anyone else) must not see now.

    Other seats' hands except the cards everyone saw go into them, the talon except the
    face-up trump card, and the reserve cards not turned up by a declaration.
    """
    full = match_state(match).reveal()
    hidden: set[str] = set()
    for seat, hand in enumerate(full["hands"]):
        if seat != observer:
            hidden |= set(hand) - set(full["known_cards"][seat])
    if match.game == "durak":
        hidden |= set(full["talon"]) - {full["trump_card"]}
    else:
        for seat, reserve in enumerate(full["reserves"]):
            if seat != observer and full["revealed_reserves"][seat] is None:
                hidden.add(reserve)
    return hidden


def cards_in(text: str, cards: set[str]) -> set[str]:
    """Return the cards of ``cards`` that appear in ``text`` as card strings."""
    return {card for card in cards if re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", text)}


def every_card(deck_size: int) -> set[str]:
    return set(deck_cards(deck_size))


def finished_bot_match(bots: list, loser: int | None, *, forfeit: int | None = None,
                       reason: str = "loser", status: str = "finished", game: str = "durak",
                       finished_at=None, versions: list | None = None, **fields) -> Match:
    """Store a finished match (no moves) with ``bots`` in its seats (None: an open seat), in
    order, and count it
    in the kept records as finishing it does (``games.records``).

    Each seat records its bot's current version, as seating does, or ``versions[i]``.
    """
    from django.db import transaction
    from django.utils import timezone

    from bots.models import Bot
    from games.models import Seat
    from games.records import match_records_count

    held = [bot.pk for bot in bots if bot is not None]
    current = dict(Bot.objects.filter(pk__in=held).values_list("pk", "version"))
    if versions is None:
        versions = [current[bot.pk] if bot is not None else None for bot in bots]
    with transaction.atomic():
        match = Match.objects.create(
            game=game, players=len(bots), deck_size=36 if game == "durak" else 32,
            status=status, loser=loser, end_reason=reason, forfeit_seat=forfeit,
            finished_at=finished_at or timezone.now(), **fields,
        )  # fmt: skip
        Seat.objects.bulk_create(
            Seat(match=match, index=index, bot=bot, bot_version_id=getattr(version, "pk", version))
            for index, (bot, version) in enumerate(zip(bots, versions, strict=True))
        )
        match_records_count(match=match)
    return match
