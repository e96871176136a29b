"""Shapes of the games API: input serializers check form, output serializers shape answers.

Legality is the engine's business, not a serializer's. No output serializer of a match
in progress holds the seed, the decks or the snapshot: hidden cards reach a client only
through the engine's ``view(seat)`` for that seat's holder, and ``reveal()`` once the
match is over.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from cardkit.engine import GAME_CLASSES
from cardkit.protocol import MAX_COMMENT_BYTES
from games.models import Match, Seat
from games.reading import match_forfeit_reason, match_seed_revealed

# What any game allows, from the engine's GameInfo; the engine checks the game's own range.
_INFOS = [game.INFO for game in GAME_CLASSES.values()]
MIN_PLAYERS = min(info.min_players for info in _INFOS)
MAX_PLAYERS = max(info.max_players for info in _INFOS)
DECK_SIZES = sorted({size for info in _INFOS for size in info.deck_sizes})

CARD = r"^[6-9TJQKA][SHDC]$"
MAX_TIMEOUT = 30.0

STATE_HELP = (
    "The engine's view of the table: for a match in play what anyone may see (hand sizes, "
    "table or pile, discard, trump card, cards everyone saw go into a hand, the public "
    "history of the deal); a seat's own view adds `hand` (and the Volynshchik `reserve`). "
    "Once the match is over, the whole table: `hands`, `talon` (Durak), `reserves` "
    "(Volynshchik). A fool series adds `series` (letters, deal results)."
)


# --- Games ------------------------------------------------------------------------------


class PlayerCountSerializer(serializers.Serializer):
    min = serializers.IntegerField()
    max = serializers.IntegerField()


class MoveTypeSerializer(serializers.Serializer):
    type = serializers.CharField()
    description = serializers.CharField()
    example = serializers.JSONField()


class GameSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    players = PlayerCountSerializer()
    deck_sizes = serializers.ListField(child=serializers.IntegerField())
    default_deck_size = serializers.IntegerField()
    formats = serializers.ListField(child=serializers.CharField())
    rules_summary = serializers.CharField()
    moves = MoveTypeSerializer(many=True, help_text="The move vocabulary, as JSON objects.")


# --- Creating and joining ---------------------------------------------------------------


class SeatSpecSerializer(serializers.Serializer):
    """Who holds a seat at creation: yourself, or a bot. An open seat is null."""

    user = serializers.CharField(
        required=False, help_text="Your own username (other people join by themselves)."
    )
    bot = serializers.CharField(required=False, help_text="A bot's name or id.")

    def validate(self, attrs):
        if len(attrs) != 1:
            raise serializers.ValidationError('Give exactly one of "user" and "bot".')
        return attrs


class MatchCreateSerializer(serializers.Serializer):
    game = serializers.ChoiceField(choices=Match.Game.choices)
    players = serializers.IntegerField(min_value=MIN_PLAYERS, max_value=MAX_PLAYERS)
    deck_size = serializers.ChoiceField(
        choices=DECK_SIZES, required=False, help_text="Default: 36 for Durak, 32 for Volynshchik."
    )
    format = serializers.ChoiceField(choices=Match.Format.choices, default=Match.Format.DEAL)
    rated = serializers.BooleanField(default=False)
    move_time_limit = serializers.FloatField(
        default=60.0, min_value=0.05, max_value=86400.0, help_text="Seconds per move."
    )
    dealer = serializers.IntegerField(default=0, min_value=0, max_value=4)
    seats = serializers.ListField(
        child=SeatSpecSerializer(allow_null=True),
        required=False,
        help_text=(
            'One entry per seat: `{"user": "<your username>"}`, `{"bot": "<name>"}` or '
            "null for an open seat. Default: you in seat 0, the others open. The match "
            "starts when every seat is held."
        ),
    )
    decks = serializers.ListField(
        child=serializers.ListField(child=serializers.RegexField(CARD)),
        required=False,
        help_text=(
            "Unrated single deals only: `[deck]`, the cards top first, instead of a secret seed."
        ),
    )


class MatchJoinSerializer(serializers.Serializer):
    seat = serializers.IntegerField(
        required=False, min_value=0, help_text="Default: the lowest open seat."
    )
    bot = serializers.CharField(
        required=False, help_text="Seat one of your bots (name or id) instead of yourself."
    )


class SeatChoiceSerializer(serializers.Serializer):
    seat = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="Needed only when you hold several seats; default: your seat to move.",
    )


# --- Moves ------------------------------------------------------------------------------


@extend_schema_field(
    {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string"}},
        "additionalProperties": True,
    }
)
class MoveField(serializers.JSONField):
    """A move: a JSON object with a ``type`` (its other keys are the game's, see /games/)."""


class MoveSubmitSerializer(serializers.Serializer):
    ply = serializers.IntegerField(
        min_value=0, help_text="The ply this move answers: `ply` of your view."
    )
    move = MoveField(
        help_text=(
            'A move of the game\'s vocabulary, e.g. `{"type": "attack", "cards": ["8C"]}` '
            "(see /api/v1/games/)."
        )
    )
    seat = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="Needed only when you hold several seats; default: your seat to move.",
    )
    comment = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text=(
            f"Why the bot chose this move: text of at most {MAX_COMMENT_BYTES} bytes of "
            "UTF-8. Shown to the bot's owner in its call log at once, and to everyone in "
            "the replay once the match is over (a sealed match: once its deal group ends)."
        ),
    )

    def validate_comment(self, value):
        return comment_check(value)

    def validate_move(self, value):
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise serializers.ValidationError('A move is a JSON object with a "type".')
        return value


def comment_check(value: str) -> str:
    """Return a move's ``comment`` if it is within ``MAX_COMMENT_BYTES`` bytes of UTF-8,
    else raise a ValidationError that names the limit (``CharField`` has refused
    what is not text, and NUL, which PostgreSQL's text cannot hold)."""
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise serializers.ValidationError("A comment is text (a lone surrogate is not).") from None
    if size > MAX_COMMENT_BYTES:
        raise serializers.ValidationError(
            f"A comment is at most {MAX_COMMENT_BYTES} bytes of UTF-8; this one is {size}."
        )
    return value


class MoveOutcomeSerializer(serializers.Serializer):
    match = serializers.IntegerField(source="move.match_id")
    ply = serializers.IntegerField(source="move.ply", help_text="The ply this move answered.")
    seat = serializers.IntegerField(source="move.seat")
    move = serializers.JSONField(source="move.move")
    received_at = serializers.DateTimeField(source="move.received_at")
    time_taken = serializers.FloatField(
        source="move.time_taken", help_text="Seconds from the start of the turn."
    )
    next_ply = serializers.SerializerMethodField(help_text="The ply of the next move.")
    ended_match = serializers.BooleanField(help_text="Whether this move ended the match.")

    def get_next_ply(self, outcome) -> int:
        return outcome.move.ply + 1


# --- Matches ----------------------------------------------------------------------------


class SeatSerializer(serializers.ModelSerializer):
    # Null for an open seat, and for the kind of holder a held seat does not have.
    user = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    bot = serializers.SlugRelatedField(slug_field="name", read_only=True, allow_null=True)
    bot_kind = serializers.SerializerMethodField()

    class Meta:
        model = Seat
        fields = ["index", "user", "bot", "bot_kind"]

    def get_bot_kind(self, seat) -> str | None:
        return seat.bot.kind if seat.bot_id else None


class MatchSerializer(serializers.ModelSerializer):
    """A match as listed: options, seats, progress and result, no cards."""

    seats = SeatSerializer(many=True, read_only=True)
    # Null for the arena's own matches (ladder).
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    forfeit_reason = serializers.SerializerMethodField(
        help_text="What the forfeiting seat did; blank while the match is sealed (it may "
        "name cards of its deck)."
    )

    class Meta:
        model = Match
        fields = [
            "id", "game", "players", "deck_size", "format", "status", "rated", "dealer",
            "move_time_limit", "created_by", "seats", "created_at", "started_at",
            "finished_at", "ply", "to_move", "turn_started_at", "deadline_at", "result",
            "loser", "end_reason", "forfeit_seat", "forfeit_reason", "seed_commitment",
            "sealed",
        ]  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "sealed": {
                "help_text": "The match's deck is dealt again in matches still to end: no "
                "card, seed or log of it is shown until they have (docs/fairness.md)."
            }
        }


    def get_forfeit_reason(self, match) -> str:
        return match_forfeit_reason(match)


class MatchDetailSerializer(MatchSerializer):
    """One match: the list fields, the public state, and the seed once revealed."""

    seed = serializers.SerializerMethodField(
        help_text="The shuffle seed, once the match is over and unsealed; null before."
    )
    decks = serializers.SerializerMethodField(
        help_text="The deck of every deal (top first), once the match is over."
    )
    state = serializers.SerializerMethodField(help_text=STATE_HELP)

    class Meta(MatchSerializer.Meta):
        fields = [*MatchSerializer.Meta.fields, "seed", "decks", "state"]
        read_only_fields = fields

    def get_seed(self, match) -> str | None:
        return match_seed_revealed(match)

    @extend_schema_field(
        serializers.ListField(
            child=serializers.ListField(child=serializers.CharField()), allow_null=True
        )
    )
    def get_decks(self, match):
        return self.context.get("decks")

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_state(self, match):
        return self.context.get("state")


class PlayerViewSerializer(serializers.Serializer):
    """What one seat sees, and what it needs to move."""

    match = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Match.Status.choices)
    seat = serializers.IntegerField(
        allow_null=True, help_text="Your seat; null for a spectator (the public view)."
    )
    your_seats = serializers.ListField(child=serializers.IntegerField())
    ply = serializers.IntegerField(help_text="Moves so far: send this `ply` with your move.")
    to_move = serializers.IntegerField(allow_null=True)
    your_turn = serializers.BooleanField()
    deadline_at = serializers.DateTimeField(
        allow_null=True, help_text="When the seat to move loses on time."
    )
    legal_moves = serializers.ListField(
        child=serializers.JSONField(),
        allow_null=True,
        help_text="Every legal move when it is your turn, else null.",
    )
    view = serializers.JSONField(allow_null=True, help_text=STATE_HELP)
    result = serializers.JSONField(allow_null=True)
    end_reason = serializers.CharField(allow_blank=True)


class ReplayStepSerializer(serializers.Serializer):
    ply = serializers.IntegerField(help_text="Moves played before this state.")
    seat = serializers.IntegerField(allow_null=True, help_text="Who made the last move.")
    move = serializers.JSONField(allow_null=True, help_text="The last move (null at ply 0).")
    received_at = serializers.DateTimeField(allow_null=True)
    time_taken = serializers.FloatField(allow_null=True)
    think_time = serializers.FloatField(
        allow_null=True,
        help_text=(
            "For a move of an HTTP bot: seconds from the arena's request sent to the bot's "
            "answer, the bot's own time (time_taken also counts the arena's queueing). Null "
            "for other moves."
        ),
    )
    comment = serializers.CharField(
        allow_null=True,
        help_text=(
            "Why the bot chose the move, in its own words (the move's `comment`); null "
            "for none, and for every move while the match is in play or sealed."
        ),
    )
    state = serializers.JSONField(
        help_text=(
            "The state after `ply` moves, without its `history` (the steps are the log): "
            "every hand visible for a finished match, the public view otherwise."
        )
    )


class ReplaySerializer(serializers.Serializer):
    match = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Match.Status.choices)
    complete = serializers.BooleanField(
        help_text="True for a finished match (all cards shown), false for public steps only."
    )
    ply = serializers.IntegerField(help_text="Moves in the log.")
    seed = serializers.CharField(allow_null=True)
    seed_commitment = serializers.CharField()
    decks = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()), allow_null=True
    )
    result = serializers.JSONField(allow_null=True)
    end_reason = serializers.CharField(allow_blank=True)
    forfeit_seat = serializers.IntegerField(
        allow_null=True, help_text="The seat that forfeited (timed out, resigned, ...), if any."
    )
    forfeit_reason = serializers.CharField(
        allow_blank=True, help_text="What the forfeiting seat did, for a forfeited match."
    )
    seats = serializers.ListField(
        child=serializers.CharField(),
        help_text="The players' names by seat (a bot's name or a user's), as on the match page.",
    )
    seat_versions = serializers.ListField(
        child=serializers.CharField(allow_null=True),
        required=False,
        help_text="By seat, the label of the bot's version that played it; null for a person.",
    )
    steps = ReplayStepSerializer(many=True)


class VerificationSerializer(serializers.Serializer):
    match = serializers.IntegerField(source="match_id")
    ok = serializers.BooleanField()
    kind = serializers.ChoiceField(
        choices=["seeded", "group", "explicit"],
        help_text="seeded: the match's own seed; group: a deck of a deal group's seed; "
        "explicit: decks its creator chose (practice), not random.",
    )
    checks = serializers.ListField(
        child=serializers.CharField(), help_text="Exactly what was checked, one line each."
    )
    seed = serializers.CharField(
        allow_blank=True, help_text="The seed the decks were dealt from (blank: explicit)."
    )
    group_seed = serializers.CharField(
        allow_null=True, help_text="The deal group's seed (kind group), else null."
    )
    deal_number = serializers.IntegerField(allow_null=True)
    deal_copy = serializers.IntegerField(allow_null=True)
    group_commitment = serializers.CharField(
        allow_null=True, help_text="sha256(group_seed) (kind group), else null."
    )
    commitment = serializers.CharField()
    commitment_ok = serializers.BooleanField(
        help_text="The commitment published at the start is the one the checks name."
    )
    decks = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    replay_ok = serializers.BooleanField(help_text="The log replays legally on those decks.")
    result_ok = serializers.BooleanField(help_text="The replay ends in the stored result.")
    moves = serializers.IntegerField()
    problems = serializers.ListField(child=serializers.CharField())
