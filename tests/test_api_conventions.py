"""The API's conventions: the health check, the schema and its docs pages, and one JSON
error body for every 4xx and 5xx, from a 404 to an unexpected exception."""

import json
import re

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.db import OperationalError, connection
from django.http import Http404
from django.test import Client, RequestFactory, override_settings
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer

from cardserver.api_errors import exception_handler
from cardserver.views import server_error
from games import errors as match_errors
from games.models import Match
from tournaments.creation import TournamentError


def render(data) -> object:
    """Return ``data`` as a client would read it: rendered to JSON and parsed back."""
    return json.loads(JSONRenderer().render(data))


@pytest.mark.django_db
def test_health_reports_ok_after_querying_the_database(
    api_client, django_assert_num_queries, monkeypatch
):
    # The workers' broadcast is tested in tests/ops/test_health.py.
    monkeypatch.setattr("cardserver.health.worker_queues", lambda timeout: {})
    monkeypatch.setattr("cardserver.views._workers_seen", None)
    # SELECT 1, and the matches that stopped moving (count and oldest, in one query).
    with django_assert_num_queries(2):
        response = api_client.get("/api/v1/health/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["status"] == "ok"
    assert response.json()["database"] == "ok"


def test_health_answers_503_when_the_database_fails(api_client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    monkeypatch.setattr("cardserver.health.worker_queues", lambda timeout: {})

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["database"] == "error"


def test_schema_is_an_openapi_3_document_listing_the_health_endpoint(api_client):
    response = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"] == "Card Arena API"
    assert "get" in document["paths"]["/api/v1/health/"]


def test_schema_generates_and_validates_without_warnings(tmp_path):
    # Raises SchemaGenerationError on any warning, e.g. a view whose serializer is unknown.
    call_command(
        "spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml")
    )

    assert "/api/v1/health/" in (tmp_path / "schema.yaml").read_text()


def test_docs_page_serves_swagger_ui(api_client):
    response = api_client.get("/api/v1/docs/")

    assert response.status_code == 200
    assert b"SwaggerUIBundle" in response.content


# Without collectstatic (a test's STATIC_ROOT is empty), WhiteNoise serves the apps' files.
@override_settings(WHITENOISE_USE_FINDERS=True)
@pytest.mark.parametrize("page", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs_load_only_the_projects_own_static_files(page):
    client = Client()
    html = client.get(page).content.decode()

    assert "://" not in html  # no CDN, no web fonts: the page works offline
    resources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert resources
    assert any(url.startswith("/static/drf_spectacular_sidecar/") for url in resources)
    # Every other link is a page of this site (the way back to it, the other docs).
    for url in resources:
        assert url.startswith("/") and not url.startswith("//"), url
        if not url.startswith("/static/"):
            continue
        served = client.get(url)
        assert served.status_code == 200, url
        assert b"".join(served.streaming_content)


def test_unknown_api_url_answers_json_404(client):
    response = client.get("/api/v1/no-such-endpoint/")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {"code": "not_found", "message": "Not found.", "detail": None}
    }


def test_unknown_url_outside_the_api_answers_html_404(client):
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_wrong_method_answers_error_body(api_client):
    response = api_client.post("/api/v1/health/", {})

    assert response.status_code == 405
    assert response.json() == {
        "error": {
            "code": "method_not_allowed",
            "message": 'Method "POST" not allowed.',
            "detail": None,
        }
    }


@pytest.mark.django_db
def test_invalid_token_answers_401_with_error_body_and_challenge(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")

    # The schema view renders YAML unless JSON is asked for, errors included.
    response = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"] == {
        "code": "authentication_failed",
        "message": "Invalid token.",
        "detail": None,
    }


def test_valid_token_is_accepted(user_api_client):
    response = user_api_client.get("/api/v1/schema/")

    assert response.status_code == 200


class IllegalMove(exceptions.APIException):
    status_code = 409
    default_detail = "Illegal move."
    default_code = "illegal_move"


@pytest.mark.parametrize(
    ("exc", "status", "error"),
    [
        (
            exceptions.ValidationError({"seat": ["This field is required."]}),
            400,
            {
                "code": "invalid",
                "message": "Invalid input.",
                "detail": {"seat": ["This field is required."]},
            },
        ),
        (
            exceptions.ValidationError("Seat 3 is not in this match."),
            400,
            {
                "code": "invalid",
                "message": "Seat 3 is not in this match.",
                "detail": ["Seat 3 is not in this match."],
            },
        ),
        (
            exceptions.NotAuthenticated(),
            401,
            {
                "code": "not_authenticated",
                "message": "Authentication credentials were not provided.",
                "detail": None,
            },
        ),
        (
            PermissionDenied(),
            403,
            {
                "code": "permission_denied",
                "message": "You do not have permission to perform this action.",
                "detail": None,
            },
        ),
        (
            Http404("No Match matches the given query."),
            404,
            {"code": "not_found", "message": "No Match matches the given query.", "detail": None},
        ),
        (
            IllegalMove("illegal move: 8C cannot cover 9C (lower rank, same suit)"),
            409,
            {
                "code": "illegal_move",
                "message": "illegal move: 8C cannot cover 9C (lower rank, same suit)",
                "detail": None,
            },
        ),
        (
            IllegalMove({"ply": ["Expected ply 12."]}),
            409,
            {
                "code": "illegal_move",
                "message": "Illegal move.",
                "detail": {"ply": ["Expected ply 12."]},
            },
        ),
    ],
    ids=[
        "field-errors",
        "plain-errors",
        "not-authenticated",
        "django-permission-denied",
        "django-404",
        "custom-code",
        "custom-dict-detail",
    ],
)
def test_exception_handler_answers_error_body(exc, status, error):
    response = exception_handler(exc, {})

    assert response.status_code == status
    assert render(response.data) == {"error": error}


def test_exception_handler_leaves_unexpected_exceptions_to_django():
    assert exception_handler(ValueError("boom"), {}) is None


def test_server_error_under_api_answers_error_body():
    response = server_error(RequestFactory().get("/api/v1/anything/"))

    assert response.status_code == 500
    assert json.loads(response.content) == {
        "error": {"code": "server_error", "message": "A server error occurred.", "detail": None}
    }


def test_server_error_outside_api_answers_html():
    response = server_error(RequestFactory().get("/admin/"))

    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    ("exc", "status", "error"),
    [
        (
            match_errors.NotYourSeat(),
            403,
            {"code": "not_your_seat", "message": str(match_errors.NotYourSeat()), "detail": None},
        ),
        (
            match_errors.SeatTaken(),
            409,
            {"code": "seat_taken", "message": str(match_errors.SeatTaken()), "detail": None},
        ),
        (
            Match.DoesNotExist(),
            404,
            {"code": "not_found", "message": "No match with this id.", "detail": None},
        ),
        (
            TournamentError("A tournament needs two entrants."),
            400,
            {
                "code": "invalid",
                "message": "A tournament needs two entrants.",
                "detail": ["A tournament needs two entrants."],
            },
        ),
    ],
    ids=["match-error-status", "match-error-conflict", "match-missing", "tournament-error"],
)
def test_app_errors_raised_in_any_api_view_are_answered_by_the_one_handler(exc, status, error):
    response = exception_handler(exc, {})

    assert response.status_code == status
    assert render(response.data) == {"error": error}
