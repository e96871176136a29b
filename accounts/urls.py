"""Routes of the accounts API, included under /api/v1/ by ``cardserver.urls``."""

from django.urls import path

from accounts import views

urlpatterns = [
    path("accounts/signup/", views.SignupView.as_view(), name="account-signup"),
    path("accounts/token/", views.TokenView.as_view(), name="account-token"),
]
