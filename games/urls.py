"""Routes of the games API, included under /api/v1/ by ``cardserver.urls``."""

from django.urls import path

from games import player_views, stream_views, streams, views

# The DRF view opens the request; the waiting is games/streams.py's (streams.live_view).
wait_view = streams.live_view(player_views.MatchWaitView, player_views.run_wait)
match_stream_view = streams.live_view(stream_views.MatchStreamView, streams.run_match_stream)
account_events_view = streams.live_view(stream_views.AccountEventsView, streams.run_account_stream)

urlpatterns = [
    # The three routes of play first: Django tries the patterns in order.
    path("matches/<int:pk>/me/", player_views.MatchMeView.as_view(), name="match-me"),
    path("matches/<int:pk>/moves/", player_views.MatchMoveView.as_view(), name="match-moves"),
    path("matches/<int:pk>/wait/", wait_view, name="match-wait"),
    path("matches/<int:pk>/stream/", match_stream_view, name="match-stream"),
    path("stream/events/", account_events_view, name="account-events"),
    path("games/", views.GameListView.as_view(), name="game-list"),
    path("matches/", views.MatchListCreateView.as_view(), name="match-list"),
    path("matches/<int:pk>/", views.MatchDetailView.as_view(), name="match-detail"),
    path("matches/<int:pk>/join/", views.MatchJoinView.as_view(), name="match-join"),
    path("matches/<int:pk>/cancel/", views.MatchCancelView.as_view(), name="match-cancel"),
    path("matches/<int:pk>/resign/", player_views.MatchResignView.as_view(), name="match-resign"),
    path("matches/<int:pk>/replay/", views.MatchReplayView.as_view(), name="match-replay"),
    path("matches/<int:pk>/verify/", views.MatchVerifyView.as_view(), name="match-verify"),
]
