"""A small arena with something on every page: bots, rated matches, a fit, tournaments.

Used by ``manage.py arena_demo`` (to look at the pages of a fresh checkout) and by the
page tests. Every match is played by built-in bots in this process, through the same
services as a real arena.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model

from bots.driver import bot_turns_play
from bots.models import Bot
from bots.services import builtin_bots_ensure
from cardserver.celery import eager_tasks
from games import match_endings
from games import services as match_services
from games.models import Match
from games.seating import SeatHolder
from tournaments import creation as tournament_creation
from tournaments import services as tournament_services
from tournaments.dispatch import inline_play
from tournaments.models import Tournament
from tournaments.ratings import ratings_apply_pending, ratings_fit

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass
class Demo:
    bots: dict[str, Bot]
    rated: list[Match] = field(default_factory=list)
    others: list[Match] = field(default_factory=list)
    forfeited: Match | None = None
    tournament: Tournament | None = None
    running: Tournament | None = None


def _user(username: str) -> User:
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def _builtin(name: str, player: str, owner: User) -> Bot:
    bot, _ = Bot.objects.get_or_create(
        name=name,
        defaults={
            "owner": owner,
            "kind": Bot.Kind.BUILTIN,
            "builtin": player,
            "games": ["durak", "volynshchik"],
            "description": f"A {player} player entered by {owner.username}.",
        },
    )
    return bot


def bot_match_play(game: str, bots: list[Bot], *, rated: bool = False, **options) -> Match:
    """Create a match of ``bots`` and play it to the end in this process."""
    match = match_services.match_create(
        creator=None,
        game=game,
        players=len(bots),
        seats=[SeatHolder(bot=bot) for bot in bots],
        rated=rated,
        move_time_limit=60.0,
        by_arena=True,
        **options,
    )
    bot_turns_play(match_id=match.pk)
    return Match.objects.get(pk=match.pk)


def demo_arena(
    *,
    rated_matches: int = 6,
    volynshchik: bool = True,
    series: bool = False,
    tournament: bool = True,
    fit_bootstraps: int = 20,
    fit_every: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> Demo:
    """Fill the database with a small arena; return what was made.

    ``progress(done, total)`` is called after each rated match, the other matches and the
    tournaments.
    """
    steps = rated_matches + 2

    def advance(done: int) -> None:
        if progress is not None:
            progress(done, steps)

    with eager_tasks():
        builtin = {bot.name: bot for bot in builtin_bots_ensure()}
        alice, bob = _user("alice"), _user("bob")
        bots = {
            "random": builtin["random"],
            "greedy": builtin["greedy"],
            "strong": builtin["strong"],
            "alice-greedy": _builtin("alice-greedy", "greedy", alice),
            "bob-random": _builtin("bob-random", "random", bob),
        }
        demo = Demo(bots=bots)
        pairs = [
            ("greedy", "random"), ("alice-greedy", "bob-random"), ("random", "alice-greedy"),
            ("bob-random", "greedy"), ("greedy", "alice-greedy"), ("random", "bob-random"),
        ]  # fmt: skip
        for number in range(rated_matches):
            a, b = pairs[number % len(pairs)]
            if number // len(pairs) % 2:
                a, b = b, a
            demo.rated.append(bot_match_play("durak", [bots[a], bots[b]], rated=True))
            if number % fit_every == fit_every - 1:
                # Fits now and then, so that the rating history has more than one point.
                ratings_apply_pending()
                ratings_fit(pool="durak-2p", bootstraps=fit_bootstraps)
            advance(number + 1)
        if volynshchik:
            demo.others.append(
                bot_match_play("volynshchik", [bots["greedy"], bots["random"], bots["bob-random"]])
            )
        if series:
            demo.others.append(
                bot_match_play("durak", [bots["greedy"], bots["random"]], format="fool")
            )
        demo.forfeited = _forfeited_match(bots["bob-random"], alice)
        ratings_apply_pending()
        ratings_fit(pool="durak-2p", bootstraps=fit_bootstraps)
        advance(rated_matches + 1)
        if tournament:
            demo.tournament = _tournament_played(
                "Demo cup", [bots["random"], bots["greedy"], bots["alice-greedy"]]
            )
            demo.running = tournament_creation.tournament_create(
                creator=None,
                name="Open ladder night",
                game="durak",
                players=2,
                bots=[bots["random"], bots["bob-random"], bots["alice-greedy"]],
                games_per_pairing=2,
                rated=False,
            )
            with inline_play():
                tournament_services.tournament_start(tournament_id=demo.running.pk)
        advance(steps)
    return demo


def _forfeited_match(bot: Bot, person: User) -> Match:
    """A match the bot lost on time against a person, as a slow HTTP bot would."""
    match = match_services.match_create(
        creator=person,
        game="durak",
        players=2,
        seats=[SeatHolder(user=person), SeatHolder(bot=bot)],
        move_time_limit=60.0,
        by_arena=True,
    )
    match.refresh_from_db()
    match_endings.match_forfeit(
        match_id=match.pk,
        seat=1,
        code="timeout",
        detail="seat 1 did not move within the time limit of 5 s",
    )
    return Match.objects.get(pk=match.pk)


def _tournament_played(name: str, bots: list[Bot]) -> Tournament:
    tournament = tournament_creation.tournament_create(
        creator=None,
        name=name,
        game="durak",
        players=2,
        bots=bots,
        games_per_pairing=2,
        rated=False,
    )
    tournament_services.tournament_play_inline(tournament_id=tournament.pk)
    return Tournament.objects.get(pk=tournament.pk)
