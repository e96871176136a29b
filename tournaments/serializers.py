"""Input and output shapes of the tournaments and ratings API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from bots.models import Bot
from games.models import Match
from tournaments.models import Tournament
from tournaments.pools import POOLS


class TournamentCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    game = serializers.ChoiceField(choices=Match.Game.choices)
    players = serializers.IntegerField(min_value=2, max_value=5, default=2)
    deck_size = serializers.ChoiceField(choices=[32, 36], required=False)
    match_format = serializers.ChoiceField(choices=Match.Format.choices, default="deal")
    format = serializers.ChoiceField(
        choices=Tournament.Format.choices, default=Tournament.Format.ROUND_ROBIN
    )
    games_per_pairing = serializers.IntegerField(min_value=1, max_value=10_000, default=2)
    move_time_limit = serializers.FloatField(min_value=0.1, max_value=3600, default=5.0)
    rated = serializers.BooleanField(default=False)
    duplicate = serializers.BooleanField(default=False)
    bots = serializers.ListField(
        child=serializers.CharField(), min_length=2, help_text="Entrants' bot names."
    )
    candidate = serializers.CharField(
        required=False,
        help_text="Gauntlet: the bot that plays every table (default: the first of `bots`).",
    )
    start = serializers.BooleanField(default=True, help_text="Start at once.")

    def validate_bots(self, names: list[str]) -> list[Bot]:
        found = {bot.name.lower(): bot for bot in Bot.objects.filter(name__in=names)}
        missing = [name for name in names if name.lower() not in found]
        if missing:
            raise serializers.ValidationError(f"no such bot: {', '.join(missing)}")
        return [found[name.lower()] for name in names]

    def validate_candidate(self, name: str) -> Bot:
        bot = Bot.objects.filter(name__iexact=name).first()
        if bot is None:
            raise serializers.ValidationError(f"no such bot: {name}")
        return bot


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    round = serializers.IntegerField(help_text="The round being played, from 0.")
    rounds = serializers.IntegerField()


class TournamentSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    entrants = serializers.SerializerMethodField()
    candidate = serializers.SerializerMethodField(
        help_text="Gauntlet: the bot that plays every table; null in other formats."
    )
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Tournament
        fields = [
            "id", "name", "game", "players", "deck_size", "match_format", "format",
            "games_per_pairing", "move_time_limit", "rated", "duplicate", "candidate", "status",
            "progress", "entrants", "created_by", "created_at", "started_at", "finished_at",
        ]  # fmt: skip

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, tournament: Tournament) -> dict:
        return ProgressSerializer(
            {
                "done": tournament.matches_done,
                "total": tournament.matches_total,
                "round": tournament.current_round,
                "rounds": tournament.rounds_total,
            }
        ).data

    def get_entrants(self, tournament: Tournament) -> list[str]:
        return [entry.bot.name for entry in tournament.entries.all()]

    def get_candidate(self, tournament: Tournament) -> str | None:
        if tournament.format != Tournament.Format.GAUNTLET:
            return None
        # The prefetched entries, in their order: the candidate is entered first.
        entries = list(tournament.entries.all())
        return entries[0].bot.name if entries else None


class StandingLineSerializer(serializers.Serializer):
    bot = serializers.CharField(source="name")
    games = serializers.IntegerField()
    points = serializers.FloatField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()


class CrossCellSerializer(serializers.Serializer):
    opponent = serializers.CharField()
    score = serializers.FloatField()
    games = serializers.IntegerField()


class CrossRowSerializer(serializers.Serializer):
    bot = serializers.CharField()
    cells = CrossCellSerializer(many=True)


class DeckScoresSerializer(serializers.Serializer):
    deck = serializers.IntegerField()
    scores = serializers.DictField(child=serializers.FloatField(), help_text="Bot name: points.")


class StandingsSerializer(serializers.Serializer):
    standings = StandingLineSerializer(many=True)
    crosstable = CrossRowSerializer(many=True)
    decks = DeckScoresSerializer(many=True, help_text="Duplicate tournaments: points per deck.")


class LeaderboardLineSerializer(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True)
    bot = serializers.CharField(source="name")
    rating = serializers.FloatField(allow_null=True, help_text="Batch fit (Bradley-Terry).")
    low = serializers.FloatField(allow_null=True, help_text="95% interval, lower end.")
    high = serializers.FloatField(allow_null=True, help_text="95% interval, upper end.")
    los = serializers.FloatField(
        allow_null=True, help_text="Likelihood of superiority over the next bot."
    )
    provisional = serializers.BooleanField()
    elo = serializers.FloatField(help_text="Live Elo.")
    games = serializers.IntegerField()
    losses = serializers.IntegerField()
    loss_rate = serializers.FloatField(allow_null=True)


class LeaderboardSerializer(serializers.Serializer):
    pool = serializers.ChoiceField(choices=POOLS)
    fitted_at = serializers.DateTimeField(allow_null=True)
    matches = serializers.IntegerField(help_text="Rated matches in the fit.")
    anchor = serializers.CharField(allow_null=True)
    anchor_rating = serializers.FloatField()
    lines = LeaderboardLineSerializer(many=True)


class EloPointSerializer(serializers.Serializer):
    pool = serializers.CharField()
    match = serializers.IntegerField(source="match_id")
    before = serializers.FloatField()
    after = serializers.FloatField()
    lost = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class FitPointSerializer(serializers.Serializer):
    pool = serializers.CharField()
    fitted_at = serializers.DateTimeField()
    rank = serializers.IntegerField()
    rating = serializers.FloatField()
    low = serializers.FloatField()
    high = serializers.FloatField()
    provisional = serializers.BooleanField()


class RatingHistorySerializer(serializers.Serializer):
    bot = serializers.CharField()
    next = serializers.URLField(
        allow_null=True, help_text="The page of older changes: follow this link as it is."
    )
    previous = serializers.URLField(allow_null=True, help_text="The page of newer changes.")
    elo = EloPointSerializer(many=True)
    fits = FitPointSerializer(many=True)
