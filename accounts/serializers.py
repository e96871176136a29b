"""Shapes of the accounts API."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers


class SignupSerializer(serializers.Serializer):
    username = serializers.RegexField(
        r"^[\w.@+-]{2,150}$",
        help_text="2-150 letters, digits and @ . + - _",
    )
    password = serializers.CharField(
        write_only=True,
        min_length=8,
        style={"input_type": "password"},
        help_text="At least 8 characters, not all digits, not a common password, not like "
        "the username (Django's password validators; a 400 says which failed).",
    )
    email = serializers.EmailField(required=False, default="")

    def validate_username(self, value: str) -> str:
        if get_user_model().objects.filter(username=value).exists():
            raise serializers.ValidationError("A user with that username already exists.")
        return value


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(write_only=True, style={"input_type": "password"})


class AccountTokenSerializer(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
