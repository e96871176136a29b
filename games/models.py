"""Matches as move logs: a match is its options, its deck commitment and its moves.

The state of a match is always what the engine gives when it replays the log; the
snapshot columns only cache that replay (see ``games.selectors``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class DealGroup(models.Model):
    """Matches dealt from one secret seed: a deck dealt more than once, seats rotated.

    A ladder table, a duplicate tournament's round and a sequential test's pair are
    groups. Every match of a group is sealed (``Match.sealed``) until the group unseals:
    when ``size`` of its matches have ended, or when it was abandoned and every match it
    dealt has ended. Then the seed is revealed and every deck can be recomputed from it
    (``cardkit.fairness``). The seed never leaves this row before that.
    """

    class Kind(models.TextChoices):
        LADDER = "ladder", "Ladder table"
        DUPLICATE = "duplicate", "Duplicate tournament round"
        SEQUENTIAL = "sequential", "Sequential test deck"

    kind = models.CharField(max_length=12, choices=Kind.choices)
    # Who owns the group, e.g. "tournament:7:round:2": lets the owner find its group again.
    key = models.CharField(max_length=100, unique=True)
    seed = models.CharField(max_length=64)
    commitment = models.CharField(max_length=64, help_text="sha256(seed), hex.")
    size = models.PositiveIntegerField(help_text="Matches the group deals when complete.")
    abandoned = models.BooleanField(
        default=False, help_text="No more matches will be dealt (a forfeit, a cancellation)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    unsealed_at = models.DateTimeField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        state = "unsealed" if self.unsealed_at else "sealed"
        return f"deal group {self.pk} ({self.kind}, {state})"


class Match(models.Model):
    class Game(models.TextChoices):
        DURAK = "durak", "Durak"
        VOLYNSHCHIK = "volynshchik", "Volynshchik"

    class Format(models.TextChoices):
        DEAL = "deal", "Single deal"
        FOOL = "fool", "Series to ДУРАК (Durak only)"

    class Status(models.TextChoices):
        WAITING = "waiting", "Waiting for players"
        ACTIVE = "active", "In play"
        FINISHED = "finished", "Finished"
        ABORTED = "aborted", "Aborted"

    game = models.CharField(max_length=20, choices=Game.choices)
    players = models.PositiveSmallIntegerField()
    deck_size = models.PositiveSmallIntegerField()
    format = models.CharField(max_length=10, choices=Format.choices, default=Format.DEAL)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.WAITING, db_index=True
    )
    rated = models.BooleanField(default=False)
    dealer = models.PositiveSmallIntegerField(default=0)
    move_time_limit = models.FloatField(default=60.0, help_text="Seconds per move.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_matches",
    )
    # Fair deals: the seed is secret while the match is played; its SHA-256 is public
    # from the start and the seed is revealed when the match ends.
    seed = models.CharField(max_length=128, blank=True)
    seed_commitment = models.CharField(max_length=64, blank=True)
    seed_revealed = models.BooleanField(default=False)
    # Unrated practice matches may start from decks their creator chose instead.
    decks = models.JSONField(null=True, blank=True)
    # A match of a deal group: its seed is deck ``deal_number`` of the group's seed, its
    # commitment names the group's seed, the deck and ``deal_copy`` (this match's place in
    # the group), so no two matches of a group publish the same commitment. ``sealed``
    # copies the group's state onto the row so that every read decides without a join
    # (``games.reading``).
    deal_group = models.ForeignKey(
        DealGroup, null=True, blank=True, on_delete=models.PROTECT, related_name="matches"
    )
    deal_number = models.PositiveIntegerField(null=True, blank=True)
    deal_copy = models.PositiveIntegerField(null=True, blank=True)
    sealed = models.BooleanField(default=False)

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, db_index=True)
    turn_started_at = models.DateTimeField(null=True, blank=True)
    # turn_started_at + move_time_limit, kept as a column so that the sweep for overdue
    # matches is one indexed query on any database.
    deadline_at = models.DateTimeField(null=True, blank=True, db_index=True)

    ply = models.PositiveIntegerField(default=0, help_text="Moves in the log.")
    to_move = models.PositiveSmallIntegerField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    loser = models.PositiveSmallIntegerField(null=True, blank=True)
    end_reason = models.CharField(max_length=20, blank=True)
    forfeit_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    forfeit_reason = models.CharField(max_length=500, blank=True)

    # Seats whose moves the arena itself makes (HTTP and built-in bots), as a bitmask, set
    # when the match starts: a move hands the turn to the bot driver only for these.
    arena_seats = models.PositiveSmallIntegerField(default=0)
    # Played by the arena's batch work (a tournament, the ladder, a sequential test), which
    # plays its bots' turns itself: no person or challenger waits on it, so its tasks never
    # take the capacity kept for interactive play (bots.routing).
    batch = models.BooleanField(default=False, editable=False)

    snapshot = models.JSONField(null=True, blank=True, editable=False)
    snapshot_ply = models.PositiveIntegerField(null=True, blank=True, editable=False)

    # Set, with the ratings ledger's row, when a rated match's result has been applied to
    # its pool (tournaments.ratings): the partial index below finds the few finished
    # rated matches not applied yet without reading the whole archive.
    rating_applied = models.BooleanField(default=False, editable=False)
    # Set when a finished match has been added to its bots' kept records (``games.records``),
    # in the transaction that finishes it: what makes it count once there.
    records_counted = models.BooleanField(default=False, editable=False)

    class Meta:
        verbose_name_plural = "matches"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["game", "status", "-finished_at"]),
            models.Index(
                fields=["game", "players", "finished_at", "id"],
                condition=models.Q(rated=True, status="finished", rating_applied=False),
                name="match_rating_pending",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(format="fool") | models.Q(game="durak"),
                name="fool_series_is_durak",
            ),
            models.UniqueConstraint(
                fields=["deal_group", "deal_copy"], name="one_match_per_group_copy"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.game} {self.players}p {self.status}"

    @property
    def arena_to_move(self) -> bool:
        """Whether the seat to move is one the arena plays (an HTTP or built-in bot)."""
        return self.to_move is not None and bool(self.arena_seats >> self.to_move & 1)


class Seat(models.Model):
    """A place at a match's table, held by exactly one user or bot (none while open)."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    index = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="seats",
    )
    # Indexed with the match (Meta.indexes): a bot's matches, newest first, are one
    # backward walk of that index (the archive's ?bot= filter).
    bot = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.PROTECT, related_name="seats",
        db_index=False,
    )
    # The version of the bot that played this seat: the bot's current one when seated.
    bot_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT,
        related_name="seats",
    )  # fmt: skip
    # Whether this seat forfeited its finished match (``Match.forfeit_seat``), copied here
    # when the match is counted (``games.records``) so that a bot's forfeits are an index
    # range, not a walk through all its seats.
    forfeited = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["match", "index"]
        indexes = [
            # A bot's seats newest first: its recent matches, its pairings with another bot.
            models.Index(fields=["bot", "match"], name="seat_bot_match"),
            models.Index(
                fields=["bot", "match"], condition=models.Q(forfeited=True),
                name="seat_bot_forfeits",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["match", "index"], name="one_seat_per_index"),
            models.CheckConstraint(
                condition=models.Q(user__isnull=True) | models.Q(bot__isnull=True),
                name="seat_held_by_user_or_bot_not_both",
            ),
        ]

    def __str__(self) -> str:
        holder = self.user or self.bot or "open"
        return f"seat {self.index} of match {self.match_id}: {holder}"


class Move(models.Model):
    """One entry of a match's append-only log: nothing updates or deletes a move."""

    match = models.ForeignKey(Match, on_delete=models.PROTECT, related_name="moves")
    ply = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField()
    move = models.JSONField()
    received_at = models.DateTimeField()
    time_taken = models.FloatField(help_text="Seconds from the turn's start to the move.")
    # For a move the arena asked a bot for over HTTP: when the turn was queued for the call,
    # and when the request was sent (``received_at`` is when the answer came). The bot's
    # own time is received_at - sent_at; sent_at - queued_at is the arena's delay, which
    # never counts against the bot.
    queued_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=200, blank=True)
    # The bot's word on why it chose the move, at most 1 KB of UTF-8
    # (cardkit.protocol.MAX_COMMENT_BYTES). Shown to the bot's owner at once, and to anyone
    # else only once the match can be read whole (games.reading: over, and unsealed).
    comment = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["match", "ply"]
        constraints = [
            models.UniqueConstraint(fields=["match", "ply"], name="one_move_per_ply"),
            # An Idempotency-Key names one move of a match: reusing it for another is refused.
            models.UniqueConstraint(
                fields=["match", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="one_move_per_idempotency_key",
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id} ply {self.ply}: seat {self.seat} {self.move}"


class PairRecord(models.Model):
    """A bot's results against one opponent bot in one game shape, kept as matches finish.

    Counts *pairings* (``bots.headtohead``): one seat of the bot and one of the opponent at
    a finished match. ``version`` is the version the bot's seat recorded (null for a seat
    seated before versions). The ``rated_*`` counts are of rated matches with a loser only,
    as the version fit reads them. ``games.records`` adds each finished match once and
    rebuilds the rows from the archive.
    """

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    opponent = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    game = models.CharField(max_length=20)
    players = models.PositiveSmallIntegerField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0, help_text="The opponent's seat lost.")
    losses = models.PositiveIntegerField(default=0, help_text="The bot's seat lost.")
    draws = models.PositiveIntegerField(default=0, help_text="Nobody lost.")
    # The bot's forfeits, by kind (``games.records.forfeit_kind``).
    timeouts = models.PositiveIntegerField(default=0)
    illegal = models.PositiveIntegerField(default=0)
    crashes = models.PositiveIntegerField(default=0)
    resigned = models.PositiveIntegerField(default=0)
    rated_games = models.PositiveIntegerField(default=0)
    rated_wins = models.PositiveIntegerField(default=0)
    rated_losses = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # Two partial constraints, because a unique constraint lets rows whose version
            # is null repeat on SQLite and on PostgreSQL before 15.
            models.UniqueConstraint(
                fields=["bot", "version", "opponent", "game", "players"],
                condition=models.Q(version__isnull=False),
                name="one_pair_record_per_version",
            ),
            models.UniqueConstraint(
                fields=["bot", "opponent", "game", "players"],
                condition=models.Q(version__isnull=True),
                name="one_pair_record_without_version",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} v {self.opponent_id} {self.game} {self.players}p: {self.games}"


class VersionRecord(models.Model):
    """A bot's seats at finished matches per version: played, lost and forfeited."""

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.CASCADE,
        related_name="records",
    )  # fmt: skip
    games = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    forfeits = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bot", "version"],
                condition=models.Q(version__isnull=False),
                name="one_version_record_per_version",
            ),
            models.UniqueConstraint(
                fields=["bot"],
                condition=models.Q(version__isnull=True),
                name="one_version_record_without_version",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id}@{self.version_id}: {self.games} games"
