"""/api/v1/ is the API's front door: links to its docs, its schema and its collections."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_api_root_links_to_the_docs_the_schema_and_the_collections(client):
    response = client.get("/api/v1/")

    assert response.status_code == 200
    body = response.json()
    assert body["docs"].endswith("/api/v1/docs/")
    assert body["schema"].endswith("/api/v1/schema/")
    assert body["site"] == "http://testserver/"
    for name in ("games", "matches", "bots", "tournaments", "sequential_tests"):
        assert client.get(body["collections"][name]).status_code == 200, name


def test_api_root_refuses_a_post_with_the_json_error_body(client):
    response = client.post("/api/v1/")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("path", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs_pages_take_images_fonts_and_data_from_this_site_only(client, path):
    response = client.get(path)

    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    assert "img-src 'self' data:" in policy
    assert "connect-src 'self'" in policy


@pytest.mark.parametrize("path", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs_pages_link_back_to_the_site(client, path):
    page = client.get(path).content.decode()

    assert '<a href="/">&larr; Card Arena</a>' in page


def test_favicon_ico_redirects_to_the_site_icon(client):
    response = client.get("/favicon.ico")

    assert response.status_code == 301
    assert response.headers["Location"].endswith("/web/favicon.svg")
