"""Shapes of the bots API: input serializers check the shape, output ones shape the answer.

Whether a name is free, a URL safe or a game known is decided by ``bots.services``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from bots.models import Bot, ChallengePolicy, bot_name_validator
from cardkit.engine import GAME_CLASSES
from cardserver.fields import StrictCharField

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
    version = serializers.CharField(
        source="version.label", read_only=True, allow_null=True, default=None,
        help_text="The label of the version playing now (`name@label` names it).",
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
            "version",
            "enabled",
            "challenge_policy",
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
    version = serializers.CharField(
        max_length=40, required=False,
        help_text="Start a new version with this label (the same as POST .../versions/).",
    )
    challenge_policy = serializers.ChoiceField(
        choices=ChallengePolicy.choices,
        required=False,
        help_text="How other owners' challenges are answered: `accept_all`, `builtin_only` "
        "(accept a table of built-in bots, decline others) or `manual` (you or the bot answer).",
    )


class BotVersionSerializer(serializers.Serializer):
    """A version of a bot and what it played."""

    label = serializers.CharField()
    name = serializers.CharField(help_text="`bot@label`.")
    reason = serializers.CharField(help_text="registered, owner, url or ping.")
    current = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    games = serializers.IntegerField(help_text="Finished matches it played.")
    losses = serializers.IntegerField()
    loss_rate = serializers.FloatField(allow_null=True)


class BotVersionCreateSerializer(serializers.Serializer):
    label = StrictCharField(max_length=40)


class BotPingSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    fault = serializers.CharField(
        allow_null=True, help_text="Why the answer was refused, as in a forfeit."
    )
    detail = serializers.CharField(allow_blank=True)
    elapsed_ms = serializers.IntegerField()
    bot = BotSerializer()


class ForfeitCountsSerializer(serializers.Serializer):
    timeouts = serializers.IntegerField(help_text="Out of time.")
    crashes = serializers.IntegerField(
        help_text="No usable answer: connection errors, HTTP errors, redirects, oversized "
        "answers, refused URLs."
    )
    illegal = serializers.IntegerField(help_text="Illegal or malformed moves.")
    resigned = serializers.IntegerField()


class OpponentRecordSerializer(serializers.Serializer):
    """The bot's record against one opponent in one game shape (pairings of seats)."""

    opponent = serializers.CharField()
    game = serializers.CharField()
    players = serializers.IntegerField()
    games = serializers.IntegerField(help_text="Pairings: a seat of each at a finished match.")
    points = serializers.FloatField(
        help_text="1 when the opponent's seat lost, 1/2 for a draw or a third seat lost."
    )
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    others = serializers.IntegerField(help_text="A third seat lost.")
    score = serializers.FloatField(help_text="points / games")
    score_low = serializers.FloatField(help_text="95% interval of the score (Wilson).")
    score_high = serializers.FloatField()
    forfeits = ForfeitCountsSerializer(help_text="The bot's own forfeits, by kind.")

    def to_representation(self, record):
        low, high = record.interval
        return {
            "opponent": record.opponent,
            "game": record.game,
            "players": record.players,
            "games": record.games,
            "points": record.points,
            "wins": record.wins,
            "losses": record.losses,
            "draws": record.draws,
            "others": record.others,
            "score": record.score,
            "score_low": low,
            "score_high": high,
            "forfeits": record.forfeits,
        }
