"""Creating a tournament: its options and entrants checked, and every match of its
schedule written (none started yet; ``tournaments.services`` starts and plays them)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.db import transaction

from bots.models import Bot
from cardkit.engine import load_game
from games.errors import InvalidMatchRequest
from games.services import bot_seat_check
from tournaments.models import Entrant, Tournament, TournamentMatch
from tournaments.schedule import build_schedule, check_options, cycles_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class TournamentError(ValueError):
    """A tournament action that the tournament's state or options do not allow."""


def tournament_create(
    *,
    creator: User | None,
    name: str,
    game: str,
    players: int,
    bots: Sequence[Bot],
    deck_size: int | None = None,
    match_format: str = "deal",
    format: str = Tournament.Format.ROUND_ROBIN,
    games_per_pairing: int = 2,
    move_time_limit: float = 5.0,
    rated: bool = True,
    duplicate: bool = False,
    seed: str | None = None,
    candidate: Bot | None = None,
) -> Tournament:
    """Create a tournament and every match of its schedule (none started yet).

    A gauntlet's ``candidate`` (default: the first of ``bots``; added to them if missing)
    is entered first and plays every table; other formats take no candidate.
    Raise TournamentError when the options or the entrants do not make a tournament.
    ``creator`` None or staff is the arena, which may enter anyone's bot; anyone else
    enters only the bots they may seat in a match (their own and the built-in ones), rated
    or not: an entry spends the bot's calls, and its forfeits cost it its health.
    """
    if deck_size is None:
        deck_size = 32 if game == "volynshchik" else 36
    if candidate is not None:
        if format != Tournament.Format.GAUNTLET:
            raise TournamentError("only a gauntlet has a candidate")
        bots = [candidate, *(bot for bot in bots if bot.pk != candidate.pk)]
    try:
        load_game(game, players=players, deck_size=deck_size)
        cycles_of(format)
        check_options(entrants=len(bots), players=players, games_per_pairing=games_per_pairing)
    except ValueError as exc:
        raise TournamentError(str(exc)) from None
    if match_format not in ("deal", "fool") or (match_format == "fool" and game != "durak"):
        raise TournamentError("a series to ДУРАК (format fool) is for Durak only")
    if duplicate and match_format != "deal":
        # games.services.match_create deals explicit decks to single deals only.
        raise TournamentError("duplicate deals are for single deals (match format deal) only")
    if len({bot.pk for bot in bots}) != len(bots):
        raise TournamentError("a bot can enter a tournament only once")
    for bot in bots:
        if game not in (bot.games or []):
            raise TournamentError(f"bot {bot.name} does not play {game}")
        if not bot.enabled:
            raise TournamentError(f"bot {bot.name} is disabled")
        if creator is not None and not creator.is_staff:
            try:
                bot_seat_check(bot=bot, user=creator)
            except InvalidMatchRequest as exc:
                raise TournamentError(str(exc)) from None
    if move_time_limit <= 0:
        raise TournamentError("the time limit per move must be positive")

    schedule = build_schedule(
        [bot.pk for bot in bots],
        players=players,
        games_per_pairing=games_per_pairing,
        format=format,
        duplicate=duplicate,
    )
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name,
            game=game,
            players=players,
            deck_size=deck_size,
            match_format=match_format,
            format=format,
            games_per_pairing=games_per_pairing,
            move_time_limit=move_time_limit,
            rated=rated,
            duplicate=duplicate,
            seed=seed or secrets.token_hex(16),
            rounds_total=max(m.round for m in schedule) + 1,
            matches_total=len(schedule),
            created_by=creator,
        )
        Entrant.objects.bulk_create(
            Entrant(tournament=tournament, bot=bot, order=order) for order, bot in enumerate(bots)
        )
        TournamentMatch.objects.bulk_create(
            (
                TournamentMatch(
                    tournament=tournament,
                    index=m.index,
                    round=m.round,
                    pairing=m.pairing,
                    rotation=m.rotation,
                    deck=m.deck,
                    table=list(m.table),
                )
                for m in schedule
            ),
            batch_size=1000,
        )
    return tournament
