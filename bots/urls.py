"""Routes of the bots API, included under /api/v1/."""

from django.urls import path

from bots import views

urlpatterns = [
    path("bots/", views.BotListView.as_view(), name="bot-list"),
    path("bots/<str:name>/", views.BotDetailView.as_view(), name="bot-detail"),
    path("bots/<str:name>/rotate/", views.BotRotateView.as_view(), name="bot-rotate"),
    path("bots/<str:name>/enable/", views.BotEnableView.as_view(), name="bot-enable"),
    path("bots/<str:name>/disable/", views.BotDisableView.as_view(), name="bot-disable"),
    path("bots/<str:name>/ping/", views.BotPingView.as_view(), name="bot-ping"),
    path("bots/<str:name>/opponents/", views.BotOpponentsView.as_view(), name="bot-opponents"),
    path("bots/<str:name>/versions/", views.BotVersionsView.as_view(), name="bot-versions"),
]
