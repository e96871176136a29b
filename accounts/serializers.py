"""Shapes of the accounts API."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from cardserver.fields import StrictCharField


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
    name = StrictCharField(
        max_length=60, required=False, allow_blank=True,
        help_text="A name for the new token (default: \"Signed in with a password\").",
    )  # fmt: skip


class AccountTokenSerializer(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


class ApiTokenSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    prefix = serializers.CharField(
        read_only=True, help_text="The token's first characters, to tell it apart."
    )
    created_at = serializers.DateTimeField(
        read_only=True, help_text="When it was made or last rotated."
    )


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    token = serializers.CharField(
        read_only=True,
        help_text="The token itself, shown this once (only its hash is stored). Send as "
        "`Authorization: Token <token>`.",
    )


class ApiTokenNameSerializer(serializers.Serializer):
    name = StrictCharField(
        max_length=60, required=False, allow_blank=True, help_text="A name to tell it apart."
    )
