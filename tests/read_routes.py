"""Every read route of the site, generated from the URL resolver and the OpenAPI schema.

A route added to any ``urls.py`` (or to the schema) is walked by the leak tests without
editing them: its parameters are filled from what a test gives by name (``pk``, ``name``,
``pool``...), each in every way given, and a route whose parameters cannot be filled is
reported, so that a new kind of parameter fails loudly instead of being skipped.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping

from django.urls import get_resolver
from django.urls.resolvers import RoutePattern, URLPattern, URLResolver

# Route parameters (``<int:pk>``) and OpenAPI path parameters (``{id}``).
_ROUTE_PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>\w+)>")
_SCHEMA_PARAM = re.compile(r"\{(?P<name>\w+)\}")
# Admin: only the models that hold matches, their logs and what links them (a non-staff
# reader is sent to the login page, which the walk checks like any answer); the others
# would add hundreds of redirects to each walk.
_ADMIN_APPS = (
    "admin/games/", "admin/tournaments/laddermatch/", "admin/tournaments/tournamentmatch/",
    "admin/tournaments/sequentialpair/",
)  # fmt: skip


def resolver_routes() -> list[str]:
    """Return every route of the URL configuration as a path template, ``/a/<int:pk>/``."""
    routes = []
    for prefix, pattern in _walk(get_resolver().url_patterns, ""):
        if not isinstance(pattern.pattern, RoutePattern):
            continue  # the admin's two catch-all regexes
        route = "/" + prefix + str(pattern.pattern)
        if route.startswith("/admin/") and not route.startswith(
            tuple("/" + app for app in _ADMIN_APPS)
        ):
            continue
        routes.append(route)
    return routes


def schema_routes(schema: Mapping) -> list[str]:
    """Return the GET paths of an OpenAPI document as route templates (``{id}`` kept)."""
    return [path for path, operations in schema["paths"].items() if "get" in operations]


def fill(route: str, values: Mapping[str, Iterable[str]]) -> Iterator[str]:
    """Yield ``route`` with each combination of the values given for its parameters.

    Raise KeyError naming a parameter that ``values`` has nothing for.
    """
    names = [m["name"] for m in _ROUTE_PARAM.finditer(route)] + [
        m["name"] for m in _SCHEMA_PARAM.finditer(route)
    ]
    if not names:
        yield route
        return
    choices = [list(values[name]) for name in names]
    for combination in itertools.product(*choices):
        given = dict(zip(names, combination, strict=True))

        def value(m: re.Match, given: dict = given) -> str:
            return str(given[m["name"]])

        yield _SCHEMA_PARAM.sub(value, _ROUTE_PARAM.sub(value, route))


def _walk(patterns, prefix: str) -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix, pattern
