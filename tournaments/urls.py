"""Routes of the tournaments and ratings API, included under /api/v1/."""

from django.urls import path

from tournaments import sequential_api, views

urlpatterns = [
    path("tournaments/", views.TournamentListView.as_view(), name="tournament-list"),
    path("tournaments/<int:pk>/", views.TournamentDetailView.as_view(), name="tournament-detail"),
    path(
        "tournaments/<int:pk>/start/", views.TournamentStartView.as_view(), name="tournament-start"
    ),
    path(
        "tournaments/<int:pk>/cancel/",
        views.TournamentCancelView.as_view(),
        name="tournament-cancel",
    ),
    path(
        "tournaments/<int:pk>/standings/",
        views.TournamentStandingsView.as_view(),
        name="tournament-standings",
    ),
    path("tests/", sequential_api.SequentialTestListView.as_view(), name="sequential-test-list"),
    path(
        "tests/<int:pk>/",
        sequential_api.SequentialTestDetailView.as_view(),
        name="sequential-test-detail",
    ),
    path(
        "tests/<int:pk>/cancel/",
        sequential_api.SequentialTestCancelView.as_view(),
        name="sequential-test-cancel",
    ),
    path("ratings/<str:pool>/", views.LeaderboardView.as_view(), name="leaderboard"),
    path("ratings/bots/<str:name>/", views.RatingHistoryView.as_view(), name="rating-history"),
]
