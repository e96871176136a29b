"""Fixtures of the API tests: players with token clients, matches in play."""

from __future__ import annotations

import pytest

from tests.matches import start_match, token_client


@pytest.fixture(autouse=True)
def _tasks_run_in_the_request(celery_eager):
    """Run the tasks a request sends in the request's own process, as CI's SQLite pass does."""


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Hash passwords cheaply: sign-up tests need not pay for PBKDF2's iterations."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def players(user_factory):
    """Return ``make(n) -> [(user, client), ...]``: n users, each with a token client."""

    def make(count: int):
        users = [user_factory() for _ in range(count)]
        return [(user, token_client(user)) for user in users]

    return make


@pytest.fixture
def duel(players):
    """Return ``(match, [client of seat 0, client of seat 1], outsider client)``.

    A 2-player Durak match in play, dealt from a fixed deck so that tests know the cards.
    """
    (a, client_a), (b, client_b), (_c, outsider) = players(3)
    match = start_match([a, b], decks=[DUEL_DECK])
    return match, [client_a, client_b], outsider


# A 36-card deck, top first. Seat 1 (the dealer's left neighbour) is dealt first: seat 0
# holds 6S 7S 6D 7D 6C 7C, seat 1 holds 8S 9S 8D 9D 8C 9C, and 7H turned up makes hearts
# trump. Nobody holds a trump, so seat 1 attacks first, and seat 0 can beat nothing.
DUEL_DECK = [
    "8S", "9S", "6S", "7S", "8D", "9D", "6D", "7D", "8C", "9C", "6C", "7C",
    "7H", "TS", "JS", "QS", "KS", "AS", "TD", "JD", "QD", "KD", "AD", "TC",
    "JC", "QC", "KC", "AC", "6H", "8H", "9H", "TH", "JH", "QH", "KH", "AH",
]  # fmt: skip


@pytest.fixture
def client_bot(user_factory):
    """Return ``make(owner, name=...) -> (bot, client)``: a client bot and its account's client.

    A client bot plays through the API with the token of its own account.
    """
    from bots.models import Bot

    def make(owner, *, name: str = "clientbot", games=("durak", "volynshchik")):
        account = user_factory(username=f"{name}-account")
        bot = Bot.objects.create(
            name=name, owner=owner, kind=Bot.Kind.CLIENT, account=account, games=list(games)
        )
        return bot, token_client(account)

    return make
