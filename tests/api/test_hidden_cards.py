"""Hidden cards stay hidden: no answer to anyone reveals another seat's hand, the talon,
an unturned reserve card or the seed while a match is in play.

Each test plays a match to its middle, then requests every endpoint (errors included) as
each seat's player, as an outsider and anonymously, and looks for every card that
requester must not see in every body.
"""

from __future__ import annotations

import pytest

from games.models import Match
from tests.matches import cards_in, hidden_cards, play_to_the_middle, start_match, token_client

pytestmark = pytest.mark.django_db

# Answers that do not depend on any match; they may hold card strings as examples.
STATIC = ["/api/v1/games/", "/api/v1/schema/?format=json"]


def answers(client, match: Match, seat: int | None) -> dict[str, str]:
    """Return ``{request: body}`` for every endpoint, as ``client`` (holding ``seat``)."""
    base = f"/api/v1/matches/{match.pk}"
    bodies = {}
    for url in [
        "/api/v1/matches/",
        f"/api/v1/matches/?game={match.game}&status=active",
        f"{base}/",
        f"{base}/me/",
        f"{base}/wait/?timeout=0",
        f"{base}/replay/",
        f"{base}/replay/?ply={match.ply}",
        f"{base}/replay/?ply=1",
        f"{base}/verify/",
        "/api/v1/health/",
    ]:
        bodies[f"GET {url}"] = client.get(url).content.decode()
    state_move = {"type": "take"}
    for url, body in [
        (f"{base}/moves/", {"ply": match.ply, "move": state_move}),
        (f"{base}/moves/", {"ply": match.ply + 3, "move": state_move}),
        (f"{base}/moves/", {"ply": match.ply, "move": {"type": "nonsense"}}),
        (f"{base}/moves/", {"ply": match.ply, "move": {"type": "attack", "cards": ["XX"]}}),
        (f"{base}/moves/", {"ply": match.ply}),
        (f"{base}/join/", {}),
        (f"{base}/cancel/", {}),
    ]:
        bodies[f"POST {url} {body}"] = client.post(url, body).content.decode()
    return bodies


def assert_nothing_hidden_shown(match: Match, bodies: dict[str, str], seat: int | None):
    hidden = hidden_cards(match, seat)
    assert len(hidden) >= 5, "the position should hide cards"
    for request, body in bodies.items():
        shown = cards_in(body, hidden)
        assert not shown, f"{request} as seat {seat} shows {sorted(shown)}: {body[:300]}"
        assert match.seed not in body, f"{request} shows the seed"


@pytest.fixture
def static_before(api_client):
    """The static answers before any match exists."""
    return {url: api_client.get(url).content for url in STATIC}


@pytest.mark.parametrize(
    ("game", "players", "options"),
    [("durak", 3, {}), ("durak", 2, {"format": "fool"}), ("volynshchik", 3, {}),
     ("volynshchik", 5, {})],
    ids=["durak-3", "durak-fool", "volynshchik-3", "volynshchik-5"],
)  # fmt: skip
def test_no_answer_shows_a_card_its_requester_must_not_see(
    user_factory, api_client, static_before, game, players, options
):
    users = [user_factory() for _ in range(players)]
    match = play_to_the_middle(start_match(users, game=game, **options), seed=players)
    outsider = token_client(user_factory())
    requesters = [(token_client(u), seat) for seat, u in enumerate(users)]
    requesters += [(outsider, None), (api_client, None)]

    for client, seat in requesters:
        match.refresh_from_db()
        bodies = answers(client, match, seat)
        assert_nothing_hidden_shown(match, bodies, seat)
        for url in STATIC:
            assert client.get(url).content == static_before[url], f"{url} changed"

    match.refresh_from_db()
    assert match.status == Match.Status.ACTIVE


def test_own_view_shows_the_own_hand_and_reserve_but_no_other(user_factory):
    users = [user_factory() for _ in range(3)]
    match = play_to_the_middle(start_match(users, game="volynshchik"), seed=1)

    body = token_client(users[1]).get(f"/api/v1/matches/{match.pk}/me/").content.decode()

    from games.selectors import match_state

    full = match_state(match).reveal()
    assert cards_in(body, set(full["hands"][1]) | {full["reserves"][1]}) == set(
        full["hands"][1]
    ) | {full["reserves"][1]}
    assert not cards_in(body, hidden_cards(match, 1))


def test_admin_pages_of_a_match_in_play_show_no_hidden_card(user_factory, client):
    users = [user_factory() for _ in range(3)]
    match = play_to_the_middle(start_match(users), seed=2)
    staff = user_factory(username="staff", is_staff=True, is_superuser=True)
    client.force_login(staff)

    for url in [
        "/admin/games/match/",
        f"/admin/games/match/{match.pk}/change/",
        "/admin/games/move/",
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert not cards_in(body, hidden_cards(match, None)), url
        assert match.seed not in body, url


def stream_text(base_url: str, path: str, token: str | None, *, ndjson: bool, until: str,
                after_ply: int | None = None) -> str:  # fmt: skip
    """Return the raw text of a stream up to (and with) its first ``until`` event."""
    import httpx

    headers = {"Accept": "application/x-ndjson" if ndjson else "text/event-stream"}
    if token:
        headers["Authorization"] = f"Token {token}"
    if after_ply is not None:
        headers["Last-Event-ID"] = str(after_ply)
    text = []
    with httpx.stream("GET", base_url + path, headers=headers, timeout=10) as response:
        assert response.status_code == 200, response.read()
        lines = response.iter_lines()
        for line in lines:
            text.append(line)
            if f'"event":"{until}"' in line or line == f"event: {until}":
                if not ndjson:
                    text.append(next(lines))  # its data line
                return "\n".join(text)
    raise AssertionError(f"the stream {path} ended before a {until} event")


@pytest.mark.parametrize(
    ("game", "players"), [("durak", 3), ("volynshchik", 3)], ids=["durak-3", "volynshchik-3"]
)
def test_no_stream_event_shows_a_card_its_requester_must_not_see(
    live_server, user_factory, game, players
):
    from accounts.tokens import token_create

    users = [user_factory() for _ in range(players)]
    match = play_to_the_middle(start_match(users, game=game), seed=players)
    match.refresh_from_db()
    outsider = user_factory()
    requesters = [(token_create(user=u)[1], seat) for seat, u in enumerate(users)]
    requesters += [(token_create(user=outsider)[1], None), (None, None)]
    stream = f"/api/v1/matches/{match.pk}/stream/"
    for token, seat in requesters:
        bodies = {}
        for ndjson in (False, True):
            kind = "ndjson" if ndjson else "sse"
            bodies[f"{kind} {stream}"] = stream_text(
                live_server.url, stream, token, ndjson=ndjson, until="state"
            )
            # Resumed: every move since ply 3, then the view.
            bodies[f"{kind} {stream} from ply 3"] = stream_text(
                live_server.url, stream, token, ndjson=ndjson, until="state", after_ply=3
            )
            if token is not None and seat is not None:
                until = "your_turn" if match.to_move == seat else "match_started"
                bodies[f"{kind} account stream"] = stream_text(
                    live_server.url, "/api/v1/stream/events/", token, ndjson=ndjson, until=until
                )
        assert_nothing_hidden_shown(match, bodies, seat)
