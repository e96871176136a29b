"""Reads of the bot authors' pages: their bots, why one is paused, its matches, profiles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model

from bots.models import Bot
from games.models import Match
from games.selectors import matches_for_listing
from tournaments.models import LadderPause
from web import selectors


@dataclass(frozen=True, slots=True)
class PauseNotice:
    """Why the arena (or the owner) holds the bot back, and since when."""

    why: str
    since: datetime | None
    by_arena: bool


def bot_pauses(bot: Bot) -> list[PauseNotice]:
    """Return the reasons the bot is offered no new matches (none when it plays)."""
    notices = []
    if not bot.healthy:
        notices.append(
            PauseNotice(
                why=f"unhealthy: {bot.unhealthy_reason or bot.last_ping_detail or 'failed calls'}",
                since=bot.unhealthy_since,
                by_arena=True,
            )
        )
    pause = LadderPause.objects.filter(bot=bot).first()
    if pause is not None:
        notices.append(
            PauseNotice(why=f"off the ladder: {pause.reason}", since=pause.paused_at, by_arena=True)
        )
    if not bot.enabled:
        notices.append(PauseNotice(why="paused by its owner", since=None, by_arena=False))
    return notices


def bots_of_owner(owner_id: int) -> list[Bot]:
    """Return the owner's bots, by name, with their current version."""
    return list(Bot.objects.filter(owner_id=owner_id).select_related("version").order_by("name"))


def bot_recent_matches(bot: Bot, limit: int = 25) -> list[selectors.MatchLine]:
    """Return the bot's newest matches as listed on the pages (each links its call log)."""
    matches = (
        matches_for_listing()
        .filter(seats__bot=bot)
        .distinct()
        .order_by("-created_at", "-id")[:limit]
    )
    return selectors.match_lines(matches)


def profile_user(username: str):
    """Return the active user of that name, or None."""
    return get_user_model().objects.filter(username=username, is_active=True).first()


def match_title(match_id: int) -> Match | None:
    return Match.objects.filter(pk=match_id).only("id", "game", "players", "status").first()
