"""Routes of the pages, included at the site's root by ``cardserver.urls``."""

from django.urls import path

from web import author_views, bot_views, leaderboard_views, tournament_views, views

app_name = "web"

urlpatterns = [
    path("", leaderboard_views.home, name="home"),
    path("leaderboard/", leaderboard_views.leaderboard_index, name="leaderboards"),
    path("leaderboard/<str:pool>/", leaderboard_views.leaderboard, name="leaderboard"),
    path("bots/", bot_views.bot_list, name="bots"),
    path("bots/<str:name>/", bot_views.bot_detail, name="bot"),
    path("bots/<str:name>/vs/<str:other>/", bot_views.bot_versus, name="bot-versus"),
    path("tournaments/", tournament_views.tournament_list, name="tournaments"),
    path("tournaments/<int:pk>/", tournament_views.tournament_detail, name="tournament"),
    path("tests/<int:pk>/", tournament_views.sequential_test_detail, name="sequential-test"),
    path("matches/", views.archive, name="archive"),
    path("matches/<int:pk>/", views.match_detail, name="match"),
    path("matches/<int:pk>/verify/", views.match_verify, name="verify"),
    path("replays/open/", views.replay_open, name="replay-open"),
    path("play/", views.play_lobby, name="play"),
    path("play/<int:pk>/", views.play_match, name="play-match"),
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", views.signout, name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    path("me/bots/", author_views.my_bots, name="my-bots"),
    path("me/bots/<str:name>/", author_views.my_bot, name="my-bot"),
    path("me/bots/<str:name>/edit/", author_views.my_bot_edit, name="my-bot-edit"),
    path("me/bots/<str:name>/pause/", author_views.my_bot_enabled, {"enabled": False},
         name="my-bot-pause"),
    path("me/bots/<str:name>/resume/", author_views.my_bot_enabled, {"enabled": True},
         name="my-bot-resume"),
    path("me/bots/<str:name>/versions/", author_views.my_bot_version, name="my-bot-version"),
    path("me/bots/<str:name>/ping/", author_views.my_bot_ping, name="my-bot-ping"),
    path("me/bots/<str:name>/rotate/", author_views.my_bot_rotate, name="my-bot-rotate"),
    path("me/bots/<str:name>/matches/<int:pk>/calls/", author_views.my_bot_calls,
         name="my-bot-calls"),
    path("me/bots/<str:name>/matches/<int:pk>/calls.jsonl", author_views.my_bot_calls_jsonl,
         name="my-bot-calls-jsonl"),
    path("me/tokens/", author_views.my_tokens, name="my-tokens"),
    path("me/tokens/<int:pk>/revoke/", author_views.my_token_revoke, name="my-token-revoke"),
    path("users/<str:username>/", author_views.profile, name="profile"),
]
