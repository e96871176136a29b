"""Root URLs. The API lives under /api/v1/; apps add their routes to ``api_v1``."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)

from cardserver import views
from cardserver.schema import FormatParameterNegotiation

api_v1 = [
    # First: a playing client's every request is a match URL, and Django tries the
    # patterns in order.
    path("", include("games.urls")),
    path("health/", views.health, name="api-health"),
    path("", views.api_index, name="api-index"),
    # The API's description is the same for everyone and reads no data: not rate-limited,
    # so that it is there when the database (which holds the counters) is not.
    path(
        "schema/",
        SpectacularAPIView.as_view(
            throttle_classes=[], content_negotiation_class=FormatParameterNegotiation
        ),
        name="api-schema",
    ),
    path(
        "docs/",
        views.same_origin_media(
            SpectacularSwaggerView.as_view(
                url_name="api-schema", template_name="api/swagger_ui.html", throttle_classes=[]
            )
        ),
        name="api-docs",
    ),
    path(
        "redoc/",
        views.same_origin_media(
            SpectacularRedocView.as_view(
                url_name="api-schema", template_name="api/redoc.html", throttle_classes=[]
            )
        ),
        name="api-redoc",
    ),
    path("", include("bots.urls")),
    path("", include("tournaments.urls")),
    path("", include("accounts.urls")),
]

urlpatterns = [
    # Browsers and feed readers ask for /favicon.ico whatever the page says.
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("", include("web.urls")),
]

handler404 = "cardserver.views.not_found"
handler500 = "cardserver.views.server_error"
