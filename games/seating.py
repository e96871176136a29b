"""Who holds a seat: a person or a bot, as ``SeatHolder``; and finding a bot by its name.

``games`` does not import ``bots`` (the layer above it). It says what it needs of a bot
(``SeatedBot``: the fields of ``bots.Bot`` it reads), and ``bots`` registers the lookup
of a bot by name in its ``AppConfig.ready()``, which the views that read a seat spec
(``{"bot": "<name or id>"}``) ask through ``bot_named``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class SeatedBot(Protocol):
    """What ``games`` reads of a bot that holds a seat (a ``bots.Bot`` row)."""

    pk: int
    name: str
    kind: str
    enabled: bool
    games: list[str]
    owner_id: int
    account_id: int | None
    # Whether the arena makes the bot's moves (its seat goes to the bot driver), and
    # whether MAX_OPEN_MATCHES_PER_BOT applies to it: the bot's own answers, so that
    # games needs to know no bot kinds.
    played_by_arena: bool
    open_matches_capped: bool
    # Whether anyone may seat it (the built-in players), or only its owner and the arena.
    seated_by_anyone: bool
    # The bot's current version (``bots.BotVersion``), which the seat records.
    version_id: int | None

    @property
    def played_by_arena(self) -> bool: ...  # the arena makes its moves (no client calls in)

    @property
    def open_matches_capped(self) -> bool: ...  # its open matches count against a cap


@dataclass(frozen=True, slots=True)
class SeatHolder:
    """The holder of one seat: a person (``user``) or a bot, exactly one of the two."""

    user: User | None = None
    bot: SeatedBot | None = None

    def __post_init__(self) -> None:
        if (self.user is None) == (self.bot is None):
            raise ValueError("a seat is held by a user or by a bot, exactly one")

    @property
    def key(self) -> tuple[str, int]:
        """Who this is, as a rated match tells its players apart."""
        if self.bot is not None:
            return "bot", self.bot.pk
        return "user", self.user.pk


# Return the bot named (or numbered) so, or None when there is none.
BotLookup = Callable[[str], "SeatedBot | None"]

_bot_lookup: BotLookup | None = None


def bot_lookup_register(lookup: BotLookup) -> None:
    """Make ``lookup`` the way a bot named in a seat spec is found (``bots`` calls it once)."""
    global _bot_lookup
    _bot_lookup = lookup


def bot_named(name_or_id: str) -> SeatedBot | None:
    """Return the bot with this name (or this id, when it is all digits), or None.

    Raise RuntimeError when no app registered a lookup: the ``bots`` app is not installed.
    """
    if _bot_lookup is None:
        raise RuntimeError("no bot lookup registered: is the bots app installed?")
    return _bot_lookup(name_or_id)
