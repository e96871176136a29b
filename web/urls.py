"""Routes of the pages, included at the site's root by ``cardserver.urls``."""

from django.urls import path

from web import views

app_name = "web"

urlpatterns = [
    path("", views.home, name="home"),
    path("leaderboard/", views.leaderboard_index, name="leaderboards"),
    path("leaderboard/<str:pool>/", views.leaderboard, name="leaderboard"),
    path("bots/", views.bot_list, name="bots"),
    path("bots/<str:name>/", views.bot_detail, name="bot"),
    path("bots/<str:name>/vs/<str:other>/", views.bot_versus, name="bot-versus"),
    path("tournaments/", views.tournament_list, name="tournaments"),
    path("tournaments/<int:pk>/", views.tournament_detail, name="tournament"),
    path("tests/<int:pk>/", views.sequential_test_detail, name="sequential-test"),
    path("matches/", views.archive, name="archive"),
    path("matches/<int:pk>/", views.match_detail, name="match"),
    path("matches/<int:pk>/verify/", views.match_verify, name="verify"),
    path("replays/open/", views.replay_open, name="replay-open"),
    path("play/", views.play_lobby, name="play"),
    path("play/<int:pk>/", views.play_match, name="play-match"),
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", views.signout, name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
]
