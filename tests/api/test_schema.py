"""The OpenAPI document lists every endpoint of matches and accounts, with its errors."""

from __future__ import annotations

import pytest

ENDPOINTS = {
    "/api/v1/accounts/signup/": {"post": {"201", "400"}},
    "/api/v1/accounts/token/": {"post": {"200", "400"}, "delete": {"204", "401"}},
    "/api/v1/games/": {"get": {"200"}},
    "/api/v1/matches/": {"get": {"200"}, "post": {"201", "400", "401"}},
    "/api/v1/matches/{id}/": {"get": {"200", "404"}},
    "/api/v1/matches/{id}/join/": {"post": {"200", "400", "401", "404", "409"}},
    "/api/v1/matches/{id}/cancel/": {"post": {"200", "401", "403", "404", "409"}},
    "/api/v1/matches/{id}/me/": {"get": {"200", "401", "403", "404"}},
    "/api/v1/matches/{id}/wait/": {"get": {"200", "400", "403", "404"}},
    "/api/v1/matches/{id}/moves/": {"post": {"200", "400", "401", "403", "404", "409", "422"}},
    "/api/v1/matches/{id}/resign/": {"post": {"200", "401", "403", "404", "409"}},
    "/api/v1/matches/{id}/replay/": {"get": {"200", "400", "404", "409"}},
    "/api/v1/matches/{id}/verify/": {"get": {"200", "404", "409"}},
}


@pytest.fixture(scope="module")
def document(django_db_blocker):
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


@pytest.mark.parametrize("path", sorted(ENDPOINTS))
def test_every_endpoint_is_documented_with_its_answers(document, path):
    operations = document["paths"][path]

    for method, statuses in ENDPOINTS[path].items():
        documented = set(operations[method]["responses"])
        assert statuses <= documented, (path, method, statuses - documented)
        # 414 is the web server's answer, before the API's error body can be given.
        for status in documented - {"200", "201", "204", "414"}:
            body = operations[method]["responses"][status]["content"]["application/json"]
            assert body["schema"] == {"$ref": "#/components/schemas/Error"}


def test_archive_filters_are_documented(document):
    names = {p["name"] for p in document["paths"]["/api/v1/matches/"]["get"]["parameters"]}

    assert {"game", "status", "user", "bot", "loser", "result", "rated", "page"} <= names
    assert {"created_after", "created_before", "finished_after", "finished_before"} <= names


def test_idempotency_key_header_is_documented(document):
    parameters = document["paths"]["/api/v1/matches/{id}/moves/"]["post"]["parameters"]

    assert {"name": "Idempotency-Key", "in": "header"}.items() <= next(
        p for p in parameters if p["name"] == "Idempotency-Key"
    ).items()


def test_replay_documents_who_forfeited_and_why(document):
    replay = document["components"]["schemas"]["Replay"]

    assert {"forfeit_seat", "forfeit_reason"} <= set(replay["properties"])


@pytest.mark.parametrize(
    ("query", "content_type"),
    [("?format=json", "application/vnd.oai.openapi+json"), ("", "application/vnd.oai.openapi")],
)
def test_schema_is_json_with_format_json_and_yaml_otherwise(client, query, content_type):
    response = client.get(f"/api/v1/schema/{query}")

    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == content_type
