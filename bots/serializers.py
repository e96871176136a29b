"""Shapes of the bots API: input serializers check the shape, output ones shape the answer.

Whether a name is free, a URL safe or a game known is decided by ``bots.services``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from bots.models import Bot, bot_name_validator
from games.engine import GAME_CLASSES

GAME_CHOICES = list(GAME_CLASSES)
# Built-in bots are the arena's own; the API registers the other two kinds.
REGISTRABLE_KINDS = [(kind.value, kind.label) for kind in (Bot.Kind.HTTP, Bot.Kind.CLIENT)]


class BotSerializer(serializers.ModelSerializer):
    """A bot as anyone may see it; ``url`` is shown to the bot's owner only."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    games = serializers.ListField(child=serializers.CharField(), read_only=True)
    url = serializers.SerializerMethodField(
        help_text="HTTP bots, shown to the owner only; null for everyone else."
    )

    class Meta:
        model = Bot
        fields = [
            "name",
            "owner",
            "kind",
            "games",
            "description",
            "builtin",
            "url",
            "enabled",
            "healthy",
            "consecutive_failures",
            "last_ping_at",
            "last_ping_ok",
            "last_ping_detail",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_url(self, bot: Bot) -> str | None:
        request = self.context.get("request")
        if bot.kind == Bot.Kind.HTTP and request is not None and request.user.pk == bot.owner_id:
            return bot.url
        return None


class BotCredentialsSerializer(serializers.Serializer):
    """A bot's new credential, shown once: the signing secret of an HTTP bot, or the API
    token of a client bot (the other one is null)."""

    name = serializers.CharField()
    secret = serializers.CharField(
        allow_null=True, help_text="HTTP bots: the key that signs the arena's requests."
    )
    token = serializers.CharField(
        allow_null=True, help_text="Client bots: send `Authorization: Token <token>`."
    )


class BotRegisteredSerializer(BotSerializer):
    """A bot just registered, with its credential (shown this once)."""

    secret = serializers.SerializerMethodField(
        help_text="HTTP bots: the key that signs the arena's requests; null otherwise."
    )
    token = serializers.SerializerMethodField(
        help_text="Client bots: send `Authorization: Token <token>`; null otherwise."
    )

    class Meta(BotSerializer.Meta):
        fields = [*BotSerializer.Meta.fields, "secret", "token"]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_secret(self, bot: Bot) -> str | None:
        return self.context["credential"] if bot.kind == Bot.Kind.HTTP else None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_token(self, bot: Bot) -> str | None:
        return self.context["credential"] if bot.kind == Bot.Kind.CLIENT else None


class BotRegisterSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=40, validators=[bot_name_validator])
    kind = serializers.ChoiceField(
        choices=REGISTRABLE_KINDS,
        help_text="`http`: the arena POSTs to `url` on every turn. `client`: the bot plays "
        "through this API with its own token.",
    )
    games = serializers.ListField(
        child=serializers.ChoiceField(choices=GAME_CHOICES), min_length=1
    )
    url = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        default="",
        help_text="HTTP bots: where the arena POSTs its requests.",
    )
    description = serializers.CharField(
        max_length=2000, required=False, allow_blank=True, default=""
    )


class BotUpdateSerializer(serializers.Serializer):
    games = serializers.ListField(
        child=serializers.ChoiceField(choices=GAME_CHOICES), required=False, min_length=1
    )
    url = serializers.CharField(max_length=500, required=False)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True)


class BotPingSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    fault = serializers.CharField(
        allow_null=True, help_text="Why the answer was refused, as in a forfeit."
    )
    detail = serializers.CharField(allow_blank=True)
    elapsed_ms = serializers.IntegerField()
    bot = BotSerializer()
