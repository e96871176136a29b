"""A move's comment posted through the API: at most 1 KB of UTF-8, stored with the move,
hidden from the opponent and spectators while the match is in play (every read and
stream), shown in the replay once it is over, and never before a sealed match's group ends."""

from __future__ import annotations

import pytest

from cardkit.protocol import MAX_COMMENT_BYTES
from games.models import Match, Move
from tests.api.test_hidden_cards import stream_text
from tests.matches import play_random_moves, start_match, token_client

pytestmark = pytest.mark.django_db

ATTACK_8S = {"type": "attack", "cards": ["8S"]}
SECRET_PLAN = "lead the low spade, keep 9S for later"


def moves_url(match) -> str:
    return f"/api/v1/matches/{match.pk}/moves/"


def replay(client, match) -> dict:
    response = client.get(f"/api/v1/matches/{match.pk}/replay/")
    assert response.status_code == 200, response.content
    return response.json()


def token_of(client) -> str:
    return client._credentials["HTTP_AUTHORIZATION"].removeprefix("Token ")


def test_a_comment_over_1024_bytes_is_refused_with_400_naming_the_limit(duel):
    match, clients, _ = duel
    # 513 characters of two bytes each: within 1024 characters, over 1024 bytes.
    body = {"ply": 0, "move": ATTACK_8S, "comment": "é" * 513}
    response = clients[1].post(moves_url(match), body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert f"at most {MAX_COMMENT_BYTES} bytes" in str(error["detail"]["comment"])
    assert "1026" in str(error["detail"]["comment"])
    assert not Move.objects.filter(match=match).exists()


@pytest.mark.parametrize("comment", [42, ["why"], None, "nul\x00"], ids=str)
def test_a_comment_that_is_not_text_is_refused_with_400(duel, comment):
    match, clients, _ = duel

    response = clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S, "comment": comment})

    # A number is read as its text by the serializer; anything else is refused.
    if isinstance(comment, int):
        assert response.status_code == 200
        assert Move.objects.get(match=match).comment == "42"
        return
    assert response.status_code == 400
    assert "comment" in response.json()["error"]["detail"]
    assert not Move.objects.filter(match=match).exists()


def test_a_comment_of_exactly_1024_bytes_is_stored_with_the_move(duel):
    match, clients, _ = duel
    comment = "é" * (MAX_COMMENT_BYTES // 2)

    response = clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S, "comment": comment})

    assert response.status_code == 200
    move = Move.objects.get(match=match, ply=0)
    assert (move.move, move.comment) == (ATTACK_8S, comment)


def test_the_comment_is_hidden_from_the_opponent_and_spectators_while_in_play(
    duel, live_server, api_client
):
    match, clients, outsider = duel
    assert clients[1].post(
        moves_url(match), {"ply": 0, "move": ATTACK_8S, "comment": SECRET_PLAN}
    ).status_code == 200
    match.refresh_from_db()
    base = f"/api/v1/matches/{match.pk}"
    paths = [f"{base}/", f"{base}/me/", f"{base}/wait/?timeout=0", f"{base}/replay/",
             f"{base}/replay/?ply=1", "/api/v1/matches/?status=active"]  # fmt: skip

    bodies = {}
    readers = [("opponent", clients[0]), ("outsider", outsider), ("anonymous", api_client)]
    for who, client in readers:
        for path in paths:
            bodies[f"{who} GET {path}"] = client.get(path).content.decode()
    tokens = {"opponent": token_of(clients[0]), "outsider": token_of(outsider), "anonymous": None}
    for who, token in tokens.items():
        for ndjson in (False, True):
            bodies[f"{who} stream from ply 0{' ndjson' * ndjson}"] = stream_text(
                live_server.url, f"{base}/stream/", token, ndjson=ndjson, until="state",
                after_ply=0,
            )  # fmt: skip

    assert Move.objects.get(match=match, ply=0).comment == SECRET_PLAN
    for request, body in bodies.items():
        assert "keep 9S" not in body, f"{request} shows the comment: {body[:300]}"
    assert '"type":"attack"' in bodies["outsider stream from ply 0"].replace(" ", "")
    assert replay(outsider, match)["steps"][1]["comment"] is None


def test_the_comment_is_shown_in_the_replay_once_the_match_is_over(duel, api_client):
    match, clients, _ = duel
    clients[1].post(moves_url(match), {"ply": 0, "move": ATTACK_8S, "comment": SECRET_PLAN})
    match = play_random_moves(match, 500, seed=3)
    assert match.status == Match.Status.FINISHED

    steps = replay(api_client, match)["steps"]

    assert steps[1]["comment"] == SECRET_PLAN
    assert [step["comment"] for step in steps[2:]] == [None] * (len(steps) - 2)


def test_a_sealed_match_over_shows_no_comment_until_its_group_ends(user_factory, api_client):
    users = [user_factory(), user_factory()]
    match = start_match(users)
    seat = match.to_move
    first = token_client(users[seat]).get(f"/api/v1/matches/{match.pk}/me/").json()
    token_client(users[seat]).post(
        moves_url(match), {"ply": 0, "move": first["legal_moves"][0], "comment": SECRET_PLAN}
    )
    match = play_random_moves(match, 500, seed=5)
    assert match.status == Match.Status.FINISHED
    # Its deck is dealt again in a match of its group still to be played (games.sealing).
    Match.objects.filter(pk=match.pk).update(sealed=True)

    sealed = api_client.get(f"/api/v1/matches/{match.pk}/replay/")
    Match.objects.filter(pk=match.pk).update(sealed=False)
    unsealed = replay(api_client, match)

    assert sealed.status_code == 409 and "keep 9S" not in sealed.content.decode()
    assert unsealed["steps"][1]["comment"] == SECRET_PLAN
