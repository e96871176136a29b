"""A sealed deal stays sealed: while a deal group is in play, no read route shows a card
of its live match that the reader may not see, nor anything that links its matches.

The group: two rated matches of one deck, seats rotated, as a ladder table deals them.
The first has ended (its deck is the live match's deck), the second is in its middle.
Every read route of the URL configuration and of the OpenAPI schema is requested as
anonymous, as another bot owner, as the owner of a seated bot and with the seated bot's
own token; then the group ends, and every match of it reads in full and verifies.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from cardkit.engine.cards import shuffled_deck
from games.match_endings import match_forfeit
from games.models import DealGroup, Match
from games.sealing import GroupDeal, deal_group_create
from games.seating import SeatHolder
from games.selectors import match_state
from games.services import match_create
from tests.matches import (
    cards_in,
    every_card,
    hidden_cards,
    play_random_moves,
    play_to_the_middle,
    token_client,
)
from tests.read_routes import fill, resolver_routes, schema_routes

pytestmark = pytest.mark.django_db

# The tests of one rule need one kind of group; the route walk takes every kind.
ONE_GROUP = pytest.mark.parametrize("table", ["ladder"], indirect=True)

# Words that would name a match's place in its group (a ladder table, a rotation).
GROUP_WORDS = ('"deal_group"', '"deal_number"', '"deal_copy"', '"rotation"', "ladder:")


def _group_match(group: DealGroup, copy: int, bots: list) -> Match:
    return match_create(
        creator=None, game="durak", players=2, rated=True, by_arena=True, notify=False,
        seats=[SeatHolder(bot=bot) for bot in bots],
        deal=GroupDeal(group=group, number=0, copy=copy),
    )  # fmt: skip


@pytest.fixture(params=["ladder", "ladder-forfeit", "duplicate-round"])
def table(request, user_factory, client_bot):
    """A two-deal group, client bots seated: the first deal over (by the rules, or
    forfeited with a reason that names the forfeiting seat's hand), the second in its
    middle. A ladder-like group, or the first round of a duplicate tournament."""
    owner_a, owner_b, other = user_factory(), user_factory(), user_factory()
    bot_a, _ = client_bot(owner_a, name="bot-a")
    bot_b, _ = client_bot(owner_b, name="bot-b")
    client_bot(other, name="bot-c")
    tournament = None
    if request.param == "duplicate-round":
        tournament, first, second = _duplicate_round([bot_a, bot_b])
    else:
        group = deal_group_create(kind=DealGroup.Kind.LADDER, key="ladder:sealed-test", size=2)
        first = _group_match(group, 0, [bot_a, bot_b])
        second = lambda: _group_match(group, 1, [bot_b, bot_a])  # noqa: E731
    if request.param == "ladder-forfeit":
        first = play_to_the_middle(first, seed=3, telling=True)
        hand = match_state(first).view(first.to_move)["hand"]
        match_forfeit(
            match_id=first.pk, seat=first.to_move, code="illegal_move",
            detail=f"illegal move: {' '.join(hand)} held, none of them played",
        )  # fmt: skip
        first.refresh_from_db()
    else:
        first = play_random_moves(first, 2000, seed=3, telling=True)
    assert first.status == Match.Status.FINISHED
    if tournament is not None:
        from tournaments.services import tournament_match_record

        tournament_match_record(first.tournament_match.pk)
    # Every move's comment names its mover's hand: a route that showed a bot's comments too
    # early would show the live deck.
    live = play_to_the_middle(second(), seed=4, telling=True)
    assert live.seats.get(index=1).bot_id == bot_a.pk
    return {
        "group": first.deal_group, "first": first, "live": live, "bots": (bot_a, bot_b),
        "owner": owner_a, "other": other, "tournament": tournament,
    }  # fmt: skip


def _duplicate_round(bots: list):
    """Return a running duplicate tournament, the first match of its first round, and a
    function that deals the second (the same deck, seats rotated)."""
    from tournaments.creation import tournament_create
    from tournaments.models import Tournament, TournamentMatch
    from tournaments.services import _tournament_game_create

    tournament = tournament_create(
        creator=None, name="sealed", game="durak", players=2, bots=bots,
        games_per_pairing=2, duplicate=True,
    )  # fmt: skip
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.RUNNING)
    tournament.refresh_from_db()
    tms = list(TournamentMatch.objects.filter(tournament=tournament, round=0).order_by("index"))
    assert [tm.table for tm in tms] == [[b.pk for b in bots], [b.pk for b in bots[::-1]]]

    def deal(tm):
        match = _tournament_game_create(tournament, tm)
        TournamentMatch.objects.filter(pk=tm.pk).update(
            match=match, status=TournamentMatch.Status.RUNNING
        )
        return match

    return tournament, deal(tms[0]), lambda: deal(tms[1])


def _readers(table: dict) -> list[tuple[str, object, int | None]]:
    """(who, client, the seat of the live match whose view the reader may hold)."""
    from rest_framework.test import APIClient

    bot_a = table["bots"][0]

    def logged_in(user):
        client = token_client(user)
        client.force_login(user)
        return client

    return [
        ("anonymous", APIClient(), None),
        ("another owner", logged_in(table["other"]), None),
        # Its owner reads what its bot sees (the bot's own answers and comments in its call
        # log; the owner holds the bot's token or runs its server anyway), and no more.
        ("the owner of a seated bot", logged_in(table["owner"]), 1),
        ("the seated bot's token", logged_in(bot_a.account), 1),
    ]


def _body(response) -> str:
    if not getattr(response, "streaming", False):
        return response.content.decode(errors="replace")
    content = response.streaming_content
    if hasattr(content, "__aiter__"):
        from asgiref.sync import async_to_sync

        async def read() -> list[bytes]:
            return [chunk async for chunk in content]

        return b"".join(async_to_sync(read)()).decode(errors="replace")
    return b"".join(content).decode(errors="replace")


def _read_urls(client, values: dict) -> tuple[list[str], set[str]]:
    """Return every URL to read, and those of routes without parameters."""
    schema = json.loads(client.get("/api/v1/schema/?format=json").content)
    routes = set(resolver_routes()) | set(schema_routes(schema))
    urls, static = set(), set()
    for route in sorted(routes):
        filled = list(fill(route, values))
        urls.update(filled)
        if filled == [route]:
            static.add(route)
    # The archive's filters name the seated bots: the search a bot would make for its twin.
    names = values["name"]
    urls.update(f"/api/v1/matches/?bot={name}" for name in names)
    urls.update(f"/matches/?bot={name}" for name in names)
    return sorted(urls), static


def test_every_read_route_hides_the_live_deal_and_the_groups_links(api_client, table):
    # Card strings of answers that do not depend on any match (examples in the schema and
    # the catalog), read the same way before the group is looked at.
    group, first, live = table["group"], table["first"], table["live"]
    bots = table["bots"]
    match_ids = [first.pk, live.pk]
    tournament = table["tournament"]
    values = {
        "pk": match_ids + ([tournament.pk] if tournament else []), "id": match_ids,
        "object_id": match_ids, "content_type_id": [1],
        "name": [bot.name for bot in bots], "other": [bots[1].name], "pool": ["durak-2p"],
        "app_label": ["games"], "url": [""],
        # The owners' pages (profiles, tokens) are walked too: a token id of anyone's,
        # each seated bot's owner.
        "token_id": [1],
        "username": sorted({bot.owner.username for bot in bots if bot.owner_id}) or ["nobody"],
    }  # fmt: skip
    urls, static = _read_urls(api_client, values)
    assert {"/api/v1/matches/{id}/replay/", "/matches/<int:pk>/verify/"} <= (
        set(schema_routes(json.loads(api_client.get("/api/v1/schema/?format=json").content)))
        | set(resolver_routes())
    )
    deck = set(every_card(36))
    secrets_ = [group.seed, group.commitment, live.seed, first.seed]
    leaks = []
    walked = 0
    for who, client, seat in _readers(table):
        hidden = hidden_cards(live, seat)
        assert len(hidden) >= 10, "the live deal should hide cards"
        for url in urls:
            response = client.get(url, {"timeout": "0"} if url.endswith("/wait/") else {})
            body = _body(response)
            walked += 1
            found = cards_in(body, hidden)
            if url in static:
                found -= cards_in(api_client.get(url).content.decode(errors="replace"), deck)
            if found:
                leaks.append(f"{who}: GET {url} ({response.status_code}) shows {sorted(found)}")
            leaks += [f"{who}: GET {url} shows a group secret" for s in secrets_ if s in body]
            leaks += [f"{who}: GET {url} names {word}" for word in GROUP_WORDS if word in body]
            # The first deal's commitment is its own: nothing read about the live match
            # carries it (and the reverse), so the two are not linked.
            if f"/{live.pk}/" in url and first.seed_commitment in body:
                leaks.append(f"{who}: GET {url} links the live match to the first deal")
    assert not leaks, "\n".join(leaks)
    assert walked > 4 * 60, walked
    assert first.seed_commitment != live.seed_commitment


@ONE_GROUP
def test_a_sealed_finished_match_reads_as_its_result_alone(api_client, table):
    first = table["first"]
    detail = api_client.get(f"/api/v1/matches/{first.pk}/").json()
    assert detail["sealed"] and detail["result"] == first.result
    assert detail["state"] is None and detail["decks"] is None and detail["seed"] is None
    for path in ("replay", "verify"):
        response = api_client.get(f"/api/v1/matches/{first.pk}/{path}/")
        assert response.status_code == 409 and response.json()["error"]["code"] == "match_sealed"


@ONE_GROUP
def test_verify_match_command_refuses_a_sealed_match(table):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="sealed"):
        call_command("verify_match", table["first"].pk)


@ONE_GROUP
def test_the_seated_bot_still_sees_its_own_hand_in_the_live_match(table):
    live, bot_a = table["live"], table["bots"][0]
    view = token_client(bot_a.account).get(f"/api/v1/matches/{live.pk}/me/").json()
    assert view["seat"] == 1 and len(view["view"]["hand"]) > 0


@ONE_GROUP
def test_the_group_unseals_when_its_last_deal_ends_and_every_deck_recomputes(
    api_client, table, django_capture_on_commit_callbacks
):
    group, first, live = table["group"], table["first"], table["live"]
    # The group settles after the commit that ended its last match (games.events).
    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(live, 2000, seed=5)
    group.refresh_from_db()
    assert group.unsealed_at is not None
    for match in (first, live):
        match.refresh_from_db()
        assert not match.sealed
        check = api_client.get(f"/api/v1/matches/{match.pk}/verify/").json()
        assert check["ok"] and check["kind"] == "group"
        # Recomputed with the standard library only, from what the answer shows.
        seed = check["group_seed"]

        def h(text: str) -> str:
            return hashlib.sha256(text.encode("ascii")).hexdigest()

        assert h(seed) == check["group_commitment"]
        assert h(f"cardserver-group:{seed}:0:{match.deal_copy}") == check["commitment"]
        assert check["commitment"] == match.seed_commitment
        assert check["decks"] == [shuffled_deck(h(f"cardserver-deal:{seed}:0"), 36)]
        page = api_client.get(f"/matches/{match.pk}/verify/").content.decode()
        assert seed in page and "a deck of a deal group" in page


@ONE_GROUP
def test_a_group_that_is_abandoned_unseals_once_its_dealt_matches_ended(
    table, django_capture_on_commit_callbacks
):
    from games.sealing import deal_group_abandon

    group, live = table["group"], table["live"]
    group.size = 3
    group.save(update_fields=["size"])
    with django_capture_on_commit_callbacks(execute=True):
        play_random_moves(live, 2000, seed=5)
    group.refresh_from_db()
    assert group.unsealed_at is None, "a group short of its size stays sealed"
    assert deal_group_abandon(group_id=group.pk)
    live.refresh_from_db()
    assert not live.sealed


@ONE_GROUP
def test_a_closed_group_deals_no_more_matches(table):
    from games.errors import InvalidMatchRequest
    from games.sealing import deal_group_abandon

    group = table["group"]
    deal_group_abandon(group_id=group.pk)
    group.refresh_from_db()
    with pytest.raises(InvalidMatchRequest, match="closed"):
        _group_match(group, 2, list(table["bots"]))
