"""The bot registry: who a bot is, how the arena reaches it, and whether it is fit to play."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Lower

from cardserver.crypto import EncryptedTextField

bot_name_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,39}$",
    "A bot name is 2-40 letters, digits, '_', '.' or '-', starting with a letter or digit.",
)


class ChallengePolicy(models.TextChoices):
    """How a bot's owner consents, in advance or not, to the challenges of other owners."""

    ACCEPT_ALL = "accept_all", "Accept every challenge"
    BUILTIN_ONLY = "builtin_only", "Accept a table of built-in bots only, decline others"
    MANUAL = "manual", "Its owner (or the bot, on its account stream) answers each"


class Bot(models.Model):
    class Kind(models.TextChoices):
        HTTP = "http", "HTTP endpoint (the arena calls the bot)"
        CLIENT = "client", "API client (the bot calls the arena with its own token)"
        BUILTIN = "builtin", "Built-in player (runs inside the arena)"

    name = models.CharField(max_length=40, unique=True, validators=[bot_name_validator])
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bots"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    games = models.JSONField(default=list, help_text='Games it plays, e.g. ["durak"].')
    description = models.TextField(blank=True)
    url = models.URLField(blank=True, max_length=500, help_text="HTTP bots: where to POST.")
    # The HMAC key has to be readable to sign requests, so it is stored encrypted with a
    # key from the environment (``BOT_SECRET_KEYS``) rather than hashed; it is shown once
    # at registration and on rotation, and never in any listing.
    secret = EncryptedTextField(blank=True)
    account = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="bot_identity",
        help_text="Client bots: the user the bot's API token belongs to.",
    )
    builtin = models.CharField(
        max_length=20, blank=True, help_text="Built-in bots: random, greedy or strong."
    )
    enabled = models.BooleanField(default=True)
    challenge_policy = models.CharField(
        max_length=12,
        choices=ChallengePolicy.choices,
        default=ChallengePolicy.MANUAL,
        help_text="How another owner's challenge to this bot is answered (bots.challenges).",
    )
    healthy = models.BooleanField(default=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    # Why and since when the arena has held the bot back as unhealthy (cleared when a good
    # answer makes it healthy again); its owner is told by email when it starts.
    unhealthy_since = models.DateTimeField(null=True, blank=True)
    unhealthy_reason = models.CharField(max_length=300, blank=True)
    last_ping_at = models.DateTimeField(null=True, blank=True)
    last_ping_ok = models.BooleanField(null=True, blank=True)
    last_ping_detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The version playing now: every seat the bot takes records it (Seat.bot_version).
    version = models.ForeignKey(
        "BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            # "Greedy" must not pass for the built-in "greedy".
            models.UniqueConstraint(Lower("name"), name="bot_name_unique_ignoring_case"),
            models.CheckConstraint(
                condition=models.Q(kind__in=["http", "client", "builtin"]),
                name="bot_kind_valid",
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="http") | ~models.Q(url=""),
                name="http_bot_has_url",
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="builtin") | ~models.Q(builtin=""),
                name="builtin_bot_names_its_player",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def played_by_arena(self) -> bool:
        """Whether the arena makes this bot's moves (an HTTP bot it calls, a built-in player
        it runs); a client bot calls the API itself. ``games`` asks it of a seat's bot to
        know which seats the bot driver plays."""
        return self.kind in (self.Kind.HTTP, self.Kind.BUILTIN)

    @property
    def seated_by_anyone(self) -> bool:
        """Whether anyone may seat this bot in a match: the built-in players, which are
        everyone's; another bot only its owner or the arena (``games`` asks it)."""
        return self.kind == self.Kind.BUILTIN

    @property
    def open_matches_capped(self) -> bool:
        """Whether ``MAX_OPEN_MATCHES_PER_BOT`` applies: not to the built-in players, which
        the arena seats in as many matches as it opens."""
        return self.kind != self.Kind.BUILTIN


version_label_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$",
    "A version label is 1-40 letters, digits, '_', '.', '+' or '-', starting with a letter "
    "or digit.",
)


class BotVersion(models.Model):
    """One version of a bot: from when it started until the next one did.

    ``bot@label`` names it anywhere a bot is named. A version starts when the bot is
    registered, when its owner says so, when an HTTP bot's URL changes, or when an HTTP
    bot's ping answer reports a ``version`` string it has not reported before.
    """

    class Reason(models.TextChoices):
        REGISTERED = "registered", "Registered"
        OWNER = "owner", "Its owner started it"
        URL = "url", "The bot's URL changed"
        PING = "ping", "The bot's ping answer reported it"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    label = models.CharField(max_length=40, validators=[version_label_validator])
    reason = models.CharField(max_length=12, choices=Reason.choices)
    url = models.URLField(blank=True, max_length=500, help_text="HTTP bots: the URL it had.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bot", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "label"], name="one_version_label_per_bot"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id}@{self.label}"


class BotTurnLease(models.Model):
    """Which worker is playing a match's bot turns, and until when.

    One row per match. The bot-turn driver claims the match before it asks a bot for a
    move and keeps it, renewing the claim before each HTTP bot's move and whenever half
    of a built-in claim has passed, until it stops; then it lets go.
    Another driver started meanwhile (``bots.tasks.match_turn_started`` runs after every
    move) finds the match claimed and stops at once, so no bot is asked twice for one
    move (a fault in a second call could forfeit a move the first call got right) and
    no move is computed twice. A claim lapses at ``expires_at``, so a worker that died
    mid-move does not hold the match for ever.

    A lapsed claim (a row whose ``expires_at`` passed) is the arena's one evidence that a
    worker died: a holder that stops cleanly deletes its row, and a match with no row is
    waiting (in a queue, or for a person or a client bot), never abandoned.
    """

    match = models.OneToOneField(
        "games.Match", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    holder = models.CharField(max_length=32, help_text="The driver's random id.")
    ply = models.PositiveIntegerField(help_text="The move being played when last claimed.")
    expires_at = models.DateTimeField()
    # While an HTTP bot's call is queued or in flight: the bot's owner, so that the calls
    # of one owner at once can be counted (``BOTS_CALLS_PER_OWNER``). No constraint in the
    # database: its check would lock the owner's row (FOR KEY SHARE) at every call from
    # every worker at once; Django still cascades a deleted owner's claims.
    calling_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
        related_name="+", db_constraint=False,
    )  # fmt: skip
    # Claims at this ply that lapsed in a row: each one a holder that stopped renewing it
    # (its worker died), taken over by another driver. Past BOTS_TURN_MAX_LAPSES the
    # match is given up (bots.leases.lease_claim), so a turn that kills every worker
    # that plays it cannot come back for ever.
    lapses = models.PositiveSmallIntegerField(default=0)

    def __str__(self) -> str:
        return f"match {self.match_id} ply {self.ply} until {self.expires_at:%H:%M:%S}"


class Challenge(models.Model):
    """A request by ``challenger`` that ``bot`` (another owner's) play an unrated match.

    ``seats`` lists the match's seats in order, each ``{"bot": id}`` or ``{"user": id}``
    (the challenger in person); ``bot`` is in exactly one of them, and every other bot is
    one the challenger may seat. ``bots`` holds every bot seated, for the bots' pages.
    The consent is the bot owner's: the match exists only once the challenge is accepted,
    by the bot's policy, its owner, or the bot itself with its own token.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for an answer"
        ACCEPTED = "accepted", "Accepted: the match was created"
        DECLINED = "declined", "Declined"
        CANCELLED = "cancelled", "Cancelled by the challenger"
        EXPIRED = "expired", "Expired: no answer in time"

    challenger = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges_made"
    )
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="challenges")
    bots = models.ManyToManyField(Bot, related_name="challenge_seats")
    game = models.CharField(max_length=20)
    players = models.PositiveSmallIntegerField()
    deck_size = models.PositiveSmallIntegerField()
    move_time_limit = models.FloatField()
    seats = models.JSONField(help_text='Seat by seat: {"bot": id} or {"user": id}.')
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    reason = models.CharField(max_length=300, blank=True, help_text="Why it was declined.")
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", help_text="Who accepted or declined it (none: the bot's policy).",
    )  # fmt: skip
    match = models.OneToOneField(
        "games.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="challenge"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["bot", "status"])]

    def __str__(self) -> str:
        return f"challenge {self.pk}: {self.challenger_id} to {self.bot_id} ({self.status})"
