"""Routes of the bots API, included under /api/v1/."""

from django.urls import path

from bots import challenge_api, views

urlpatterns = [
    path("bots/", views.BotListView.as_view(), name="bot-list"),
    path("bots/<str:name>/", views.BotDetailView.as_view(), name="bot-detail"),
    path("bots/<str:name>/rotate/", views.BotRotateView.as_view(), name="bot-rotate"),
    path("bots/<str:name>/enable/", views.BotEnableView.as_view(), name="bot-enable"),
    path("bots/<str:name>/disable/", views.BotDisableView.as_view(), name="bot-disable"),
    path("bots/<str:name>/ping/", views.BotPingView.as_view(), name="bot-ping"),
    path("bots/<str:name>/opponents/", views.BotOpponentsView.as_view(), name="bot-opponents"),
    path("bots/<str:name>/versions/", views.BotVersionsView.as_view(), name="bot-versions"),
    path("challenges/", challenge_api.ChallengeListView.as_view(), name="challenge-list"),
    path(
        "challenges/<int:pk>/",
        challenge_api.ChallengeDetailView.as_view(),
        name="challenge-detail",
    ),
    path(
        "challenges/<int:pk>/accept/",
        challenge_api.ChallengeAcceptView.as_view(),
        name="challenge-accept",
    ),
    path(
        "challenges/<int:pk>/decline/",
        challenge_api.ChallengeDeclineView.as_view(),
        name="challenge-decline",
    ),
    path(
        "challenges/<int:pk>/cancel/",
        challenge_api.ChallengeCancelView.as_view(),
        name="challenge-cancel",
    ),
]
