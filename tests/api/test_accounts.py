"""Accounts: sign up, obtain an API token, revoke the one a request is signed with."""

from __future__ import annotations

import pytest

from accounts.models import ApiToken
from accounts.tokens import token_create, token_hash

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-passphrase"


def sign_up(client, username="alice", password=PASSWORD):
    return client.post("/api/v1/accounts/signup/", {"username": username, "password": password})


def test_sign_up_creates_the_account_and_answers_its_token(api_client):
    response = sign_up(api_client)

    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "alice"
    assert ApiToken.objects.get(user__username="alice").key_hash == token_hash(body["token"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    created = api_client.post("/api/v1/matches/", {"game": "durak", "players": 2})
    assert created.status_code == 201


def test_sign_up_with_a_taken_username_is_refused_with_400(api_client):
    sign_up(api_client)

    response = sign_up(api_client)

    assert response.status_code == 400
    assert response.json()["error"]["detail"] == {
        "username": ["A user with that username already exists."]
    }


def test_sign_up_with_a_weak_password_is_refused_with_400(api_client):
    response = sign_up(api_client, password="123")

    assert response.status_code == 400
    assert "password" in response.json()["error"]["detail"]


def test_sign_up_without_a_username_is_refused_with_400(api_client):
    response = api_client.post("/api/v1/accounts/signup/", {"password": PASSWORD})

    assert response.status_code == 400
    assert "username" in response.json()["error"]["detail"]


def test_a_new_token_is_obtained_with_username_and_password_and_the_first_still_works(
    api_client,
):
    first = sign_up(api_client).json()["token"]

    response = api_client.post(
        "/api/v1/accounts/token/", {"username": "alice", "password": PASSWORD}
    )

    assert response.status_code == 200
    second = response.json()["token"]
    assert response.json()["username"] == "alice" and second != first
    for token in (first, second):
        api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        assert api_client.get("/api/v1/accounts/tokens/").status_code == 200


def test_token_request_with_a_wrong_password_is_refused_with_400(api_client):
    sign_up(api_client)

    response = api_client.post(
        "/api/v1/accounts/token/", {"username": "alice", "password": "wrong-password"}
    )

    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_credentials",
        "message": "Wrong username or password.",
        "detail": None,
    }


def test_revoked_token_no_longer_authenticates_and_a_new_one_can_be_obtained(api_client):
    token = sign_up(api_client).json()["token"]
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    revoked = api_client.delete("/api/v1/accounts/token/")
    refused = api_client.post("/api/v1/matches/", {"game": "durak", "players": 2})
    api_client.credentials()
    renewed = api_client.post(
        "/api/v1/accounts/token/", {"username": "alice", "password": PASSWORD}
    )

    assert revoked.status_code == 204
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "authentication_failed"
    assert renewed.json()["token"] != token


def test_revoking_without_a_token_is_refused_with_401(api_client):
    response = api_client.delete("/api/v1/accounts/token/")

    assert response.status_code == 401


def test_token_of_an_inactive_user_is_refused(user, api_client):
    _token, key = token_create(user=user)
    user.is_active = False
    user.save()
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = api_client.post("/api/v1/matches/", {"game": "durak", "players": 2})

    assert response.status_code == 401
    assert response.json()["error"]["message"] == "User inactive or deleted."


def test_revoking_through_a_session_asks_for_the_tokens_id_with_400(user, client):
    client.force_login(user)
    token_create(user=user)

    response = client.delete("/api/v1/accounts/token/")

    assert response.status_code == 400
    assert "/api/v1/accounts/tokens/<id>/" in response.json()["error"]["message"] + str(
        response.json()["error"]["detail"]
    )
    assert ApiToken.objects.filter(user=user).count() == 1
