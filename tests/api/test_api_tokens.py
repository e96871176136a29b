"""API tokens at rest: stored as hashes, listed, named, revoked and rotated by their user."""

from __future__ import annotations

import pytest
from django.db import connection

from accounts.models import ApiToken
from accounts.tokens import MAX_TOKENS_PER_USER, token_create, token_hash

pytestmark = pytest.mark.django_db

TOKENS = "/api/v1/accounts/tokens/"


def signed(api_client, key: str):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api_client


def test_the_database_holds_only_the_hash_of_a_token(user):
    _token, key = token_create(user=user, name="laptop")

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")
        stored = [str(value) for row in cursor.fetchall() for value in row]

    assert key not in stored
    assert not any(key[8:] in value for value in stored)
    assert token_hash(key) in stored


def test_a_copy_of_the_token_table_authenticates_nobody(user, api_client):
    _token, key = token_create(user=user)
    row = ApiToken.objects.values("key_hash", "prefix").get()

    for guess in (row["key_hash"], row["prefix"], f"{row['prefix']}{row['key_hash']}"):
        response = signed(api_client, guess).get(TOKENS)
        assert response.status_code == 401, guess
        assert response.json()["error"]["code"] == "authentication_failed"
    assert signed(api_client, key).get(TOKENS).status_code == 200


def test_a_token_is_made_with_a_name_and_shown_once(user, user_api_client):
    made = user_api_client.post(TOKENS, {"name": "ci runner"}, format="json")

    assert made.status_code == 201
    body = made.json()
    assert body["name"] == "ci runner" and body["token"].startswith("cat_")
    assert body["prefix"] == body["token"][:8]
    listed = user_api_client.get(TOKENS).json()
    assert [t["name"] for t in listed] == ["API token", "ci runner"]
    assert all("token" not in t and "key_hash" not in t for t in listed)


def test_a_token_is_renamed(user_api_client):
    made = user_api_client.post(TOKENS, {"name": "old"}, format="json").json()

    renamed = user_api_client.patch(f"{TOKENS}{made['id']}/", {"name": "new"}, format="json")

    assert renamed.status_code == 200 and renamed.json()["name"] == "new"


def test_a_revoked_token_fails_with_401_json_and_the_others_still_work(user, api_client):
    _keep, kept = token_create(user=user, name="kept")
    revoked, key = token_create(user=user, name="revoked")

    answer = signed(api_client, kept).delete(f"{TOKENS}{revoked.pk}/")
    refused = signed(api_client, key).get(TOKENS)

    assert answer.status_code == 204
    assert refused.status_code == 401
    assert refused.json()["error"] == {
        "code": "authentication_failed", "message": "Invalid token.", "detail": None,
    }  # fmt: skip
    assert signed(api_client, kept).get(TOKENS).status_code == 200


def test_rotation_gives_a_new_token_under_the_same_name_and_ends_the_old(user, api_client):
    token, old = token_create(user=user, name="deploy")

    rotated = signed(api_client, old).post(f"{TOKENS}{token.pk}/rotate/")

    assert rotated.status_code == 200
    body = rotated.json()
    assert body["id"] == token.pk and body["name"] == "deploy" and body["token"] != old
    assert signed(api_client, old).get(TOKENS).status_code == 401
    assert signed(api_client, body["token"]).get(TOKENS).status_code == 200


@pytest.mark.parametrize(
    ("method", "suffix"), [("patch", ""), ("delete", ""), ("post", "rotate/")]
)
def test_another_users_token_answers_404_and_is_left_alone(
    user_factory, api_client, method, suffix
):
    theirs, their_key = token_create(user=user_factory(), name="theirs")
    _mine, my_key = token_create(user=user_factory())

    response = getattr(signed(api_client, my_key), method)(
        f"{TOKENS}{theirs.pk}/{suffix}", {"name": "x"}, format="json"
    )

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert ApiToken.objects.get(pk=theirs.pk).key_hash == token_hash(their_key)
    assert ApiToken.objects.get(pk=theirs.pk).name == "theirs"


def test_a_user_holds_at_most_the_cap_of_tokens(user, user_api_client):
    for _ in range(MAX_TOKENS_PER_USER - 1):
        token_create(user=user)

    refused = user_api_client.post(TOKENS, {"name": "one more"}, format="json")

    assert refused.status_code == 400
    assert "revoke one" in refused.json()["error"]["detail"]["name"][0]
    assert ApiToken.objects.filter(user=user).count() == MAX_TOKENS_PER_USER


def test_a_name_over_60_characters_is_refused_with_400(user_api_client):
    response = user_api_client.post(TOKENS, {"name": "x" * 61}, format="json")

    assert response.status_code == 400
    assert "name" in response.json()["error"]["detail"]


def test_token_routes_need_a_signed_in_user(api_client):
    assert api_client.get(TOKENS).status_code == 401
    assert api_client.post(TOKENS, {}, format="json").status_code == 401


def test_the_lookup_of_a_token_is_one_query(user, api_client, django_assert_num_queries):
    _token, key = token_create(user=user)
    from accounts.authentication import TokenAuthentication

    with django_assert_num_queries(1):
        found, auth = TokenAuthentication().authenticate_credentials(key)

    assert found.pk == user.pk and auth.user_id == user.pk


def test_the_token_routes_are_in_the_openapi_schema(api_client):
    paths = api_client.get("/api/v1/schema/?format=json").json()["paths"]

    assert set(paths["/api/v1/accounts/tokens/"]) >= {"get", "post"}
    assert set(paths["/api/v1/accounts/tokens/{token_id}/"]) >= {"patch", "delete"}
    assert "post" in paths["/api/v1/accounts/tokens/{token_id}/rotate/"]


def test_the_migration_carries_legacy_tokens_over_hashed_and_drops_them(user, api_client):
    import importlib

    from django.apps import apps

    legacy = "0123456789abcdef0123456789abcdef01234567"
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "created timestamp with time zone NOT NULL, user_id integer NOT NULL)"
            if connection.vendor == "postgresql"
            else "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "created datetime NOT NULL, user_id integer NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token VALUES (%s, %s, %s)",
            [legacy, "2026-01-02 03:04:05", user.pk],
        )
    migration = importlib.import_module("accounts.migrations.0001_api_tokens")

    migration.legacy_tokens_carry_over(apps, _Editor())

    assert "authtoken_token" not in connection.introspection.table_names()
    assert ApiToken.objects.get(user=user).key_hash == token_hash(legacy)
    assert signed(api_client, legacy).get(TOKENS).status_code == 200


class _Editor:
    """What the migrations' functions use of a schema editor."""

    connection = connection

    def execute(self, sql: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)


def test_the_command_line_makes_a_token_that_authenticates(user, api_client):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("api_token_create", user.username, "--name", "cli", stdout=out)

    key = out.getvalue().split()[2]
    assert ApiToken.objects.get(user=user).name == "cli"
    assert signed(api_client, key).get(TOKENS).status_code == 200
