"""The match and verify pages (and the verify JSON) say what was checked for each kind of
deal, and nothing that was not done (docs/fairness.md)."""

from __future__ import annotations

import pytest

from cardkit.engine.cards import deck_cards
from games.models import Match
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db


def _finished(users, **options) -> Match:
    match = play_random_moves(start_match(users, **options), 2000, seed=2)
    assert match.status == Match.Status.FINISHED
    return match


def test_a_practice_match_on_explicit_decks_says_they_were_chosen_not_shuffled(
    client, user_factory
):
    match = _finished([user_factory(), user_factory()], decks=[deck_cards(36)])

    page = client.get(f"/matches/{match.pk}/").content.decode()
    verify = client.get(f"/matches/{match.pk}/verify/").content.decode()
    check = client.get(f"/api/v1/matches/{match.pk}/verify/").json()

    assert "decks its creator chose, not shuffled" in page
    assert "hidden until the end" not in page
    assert "chosen by the match's creator (practice; not random)" in verify
    assert 'sha256("")' not in verify and "cardserver-deck" not in verify
    assert check["kind"] == "explicit" and check["ok"] and check["seed"] == ""
    assert "not random" in check["checks"][0]


def test_a_seeded_match_shows_its_seed_and_says_sha256_of_it_was_checked(client, user_factory):
    match = _finished([user_factory(), user_factory()])

    page = client.get(f"/matches/{match.pk}/").content.decode()
    verify = client.get(f"/matches/{match.pk}/verify/").content.decode()
    check = client.get(f"/api/v1/matches/{match.pk}/verify/").json()

    assert match.seed in page and "hidden until the end" not in page
    assert f'hashlib.sha256("{match.seed}".encode()).hexdigest()' in verify
    assert check["kind"] == "seeded" and check["ok"] and check["group_seed"] is None
    assert check["checks"][0] == (
        "sha256(seed) equals the commitment published when the match started"
    )
