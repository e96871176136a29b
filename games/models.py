"""Matches as move logs: a match is its options, its deck commitment and its moves.

The state of a match is always what the engine gives when it replays the log; the
snapshot columns only cache that replay (see ``games.selectors``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


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

    snapshot = models.JSONField(null=True, blank=True, editable=False)
    snapshot_ply = models.PositiveIntegerField(null=True, blank=True, editable=False)

    # Set, with the ratings ledger's row, when a rated match's result has been applied to
    # its pool (tournaments.ratings): the partial index below finds the few finished
    # rated matches not applied yet without reading the whole archive.
    rating_applied = models.BooleanField(default=False, editable=False)

    class Meta:
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
    bot = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.PROTECT, related_name="seats"
    )
    # The version of the bot that played this seat: the bot's current one when seated.
    bot_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT,
        related_name="seats",
    )  # fmt: skip

    class Meta:
        ordering = ["match", "index"]
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
