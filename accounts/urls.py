"""Routes of the accounts API, included under /api/v1/ by ``cardserver.urls``."""

from django.urls import path

from accounts import views

urlpatterns = [
    path("accounts/signup/", views.SignupView.as_view(), name="account-signup"),
    path("accounts/token/", views.TokenView.as_view(), name="account-token"),
    path("accounts/tokens/", views.TokenListView.as_view(), name="account-tokens"),
    path(
        "accounts/tokens/<int:token_id>/", views.TokenDetailView.as_view(),
        name="account-token-detail",
    ),
    path(
        "accounts/tokens/<int:token_id>/rotate/", views.TokenRotateView.as_view(),
        name="account-token-rotate",
    ),
]
