"""Tournaments, their matches, and the ratings that rated matches feed.

The truth is in these rows; Celery only moves the work along. A tournament's matches are
created with the tournament (``TournamentMatch``, one row per scheduled match, linked to
its ``games.Match`` once that exists), so progress is a count and a crash loses nothing.

Ratings are kept per *pool* (``tournaments.pools``): one per game and number of players
(Durak for 2 to 4, Volynshchik for 2 to 5). ``RatedMatch`` is the ledger: one row per
rated match whose result has been applied, numbered in the order they were applied;
``RatingChange`` holds each bot's rating before and after. Their unique constraints are
what make applying a match happen at most once; ``tournaments.ratings.ratings_apply_match``
makes it happen at least once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from games.models import Match
from tournaments.pools import pool_of
from tournaments.schedule import FORMATS


class Tournament(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Not started"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"

    class Format(models.TextChoices):
        ROUND_ROBIN = FORMATS[0], "Round-robin"
        DOUBLE_ROUND_ROBIN = FORMATS[1], "Double round-robin"
        GAUNTLET = FORMATS[2], "Gauntlet (the first entrant against each other)"

    name = models.CharField(max_length=100)
    game = models.CharField(max_length=20, choices=Match.Game.choices)
    players = models.PositiveSmallIntegerField(default=2, help_text="Players at each table.")
    deck_size = models.PositiveSmallIntegerField(default=36)
    match_format = models.CharField(
        max_length=10, default=Match.Format.DEAL, choices=Match.Format.choices
    )
    format = models.CharField(max_length=20, choices=Format.choices, default=Format.ROUND_ROBIN)
    games_per_pairing = models.PositiveIntegerField(
        default=2, help_text="Matches per table of entrants and cycle; a multiple of players."
    )
    move_time_limit = models.FloatField(default=5.0, help_text="Seconds per move.")
    rated = models.BooleanField(default=True)
    duplicate = models.BooleanField(
        default=False, help_text="Deal each deck once per seat rotation of every table."
    )
    seed = models.CharField(max_length=64, help_text="Seeds the decks of duplicate tournaments.")
    entrants = models.ManyToManyField("bots.Bot", through="Entrant", related_name="tournaments")

    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.DRAFT, db_index=True
    )
    rounds_total = models.PositiveIntegerField(default=0)
    current_round = models.PositiveIntegerField(
        default=0, help_text="The round being played (rounds before it are complete)."
    )
    matches_total = models.PositiveIntegerField(default=0)
    matches_done = models.PositiveIntegerField(
        default=0, help_text="Matches finished, aborted or cancelled."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tournaments",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(matches_done__lte=models.F("matches_total")),
                name="tournament_done_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"

    @property
    def pool(self) -> str:
        return pool_of(self.game, self.players)


class Entrant(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="entries")
    order = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["tournament", "order"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "bot"], name="one_entry_per_bot"),
            models.UniqueConstraint(fields=["tournament", "order"], name="one_entry_per_order"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} in tournament {self.tournament_id}"


class TournamentMatch(models.Model):
    """One scheduled match of a tournament; ``table`` lists its bots' ids seat by seat."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        ABORTED = "aborted", "Aborted"
        CANCELLED = "cancelled", "Cancelled"

    DONE = (Status.FINISHED, Status.ABORTED, Status.CANCELLED)

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="matches")
    index = models.PositiveIntegerField()
    round = models.PositiveIntegerField()
    pairing = models.PositiveIntegerField()
    rotation = models.PositiveSmallIntegerField()
    deck = models.PositiveIntegerField(null=True, blank=True)
    table = models.JSONField(help_text="Bot ids, seat by seat.")
    match = models.OneToOneField(
        "games.Match",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tournament_match",
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Times a task started playing it (a task that died counts)."
    )
    last_error = models.CharField(max_length=500, blank=True)
    # When its task was first sent to the workers: a pending match with none waits for a
    # slot (tournaments.backpressure), one with it counts as in flight.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "tournament matches"
        ordering = ["tournament", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "index"], name="one_tournament_match_per_index"
            ),
        ]
        indexes = [
            models.Index(fields=["tournament", "round", "status"]),
            # The tournament page's recent matches: a walk that stops after a dozen.
            models.Index(fields=["tournament", "updated_at"], name="tournamentmatch_updated"),
        ]

    def __str__(self) -> str:
        return f"tournament {self.tournament_id} match {self.index} ({self.status})"


class RatingPool(models.Model):
    """A rating pool; its row is locked while a match's result is applied to it."""

    key = models.CharField(max_length=20, primary_key=True)
    matches_applied = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return self.key


class Rating(models.Model):
    """A bot's live Elo rating in one pool."""

    pool = models.CharField(max_length=20, db_index=True)
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ratings")
    elo = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pool", "-elo"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "bot"], name="one_rating_per_pool_and_bot"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} {self.pool} {self.elo:.0f}"


class RatedMatch(models.Model):
    """A rated match whose result has been applied to its pool: exactly one row per match."""

    match = models.OneToOneField(
        "games.Match", on_delete=models.PROTECT, primary_key=True, related_name="rating_entry"
    )
    pool = models.CharField(max_length=20)
    sequence = models.PositiveIntegerField(help_text="Order of application within the pool.")
    loser_bot = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    applied_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "rated matches"
        ordering = ["pool", "sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "sequence"], name="one_rated_match_per_sequence"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pool} #{self.sequence}: match {self.match_id}"


class RatingChange(models.Model):
    """One bot's Elo before and after one rated match (its rating history)."""

    match = models.ForeignKey(
        "games.Match", on_delete=models.PROTECT, related_name="rating_changes"
    )
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="rating_changes")
    pool = models.CharField(max_length=20)
    sequence = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField()
    before = models.FloatField()
    after = models.FloatField()
    lost = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "sequence", "seat"]
        constraints = [
            models.UniqueConstraint(
                fields=["match", "bot"], name="one_rating_change_per_match_and_bot"
            ),
        ]
        indexes = [
            models.Index(fields=["bot", "pool", "sequence"]),
            # The API's pages of a bot's history, newest first across its pools.
            models.Index(fields=["bot", "id"], name="ratingchange_bot_id"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} in match {self.match_id}: {self.before:.1f} -> {self.after:.1f}"


class RatingFit(models.Model):
    """One batch Bradley-Terry fit of a pool; the newest is the pool's leaderboard."""

    pool = models.CharField(max_length=20)
    fitted_at = models.DateTimeField(auto_now_add=True)
    matches = models.PositiveIntegerField(help_text="Rated matches in the fit.")
    through_sequence = models.PositiveIntegerField(help_text="Last rated match included.")
    bootstraps = models.PositiveIntegerField()
    anchor = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    anchor_rating = models.FloatField()
    seconds = models.FloatField(default=0.0, help_text="Time the fit took.")

    class Meta:
        ordering = ["pool", "-fitted_at", "-id"]
        indexes = [models.Index(fields=["pool", "-fitted_at"])]

    def __str__(self) -> str:
        return f"{self.pool} fit of {self.fitted_at:%Y-%m-%d %H:%M}"


class FitEntry(models.Model):
    """A bot's line in a fit; a bot's entries over the fits are its rating history."""

    fit = models.ForeignKey(RatingFit, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="fit_entries")
    rank = models.PositiveIntegerField()
    rating = models.FloatField()
    low = models.FloatField()
    high = models.FloatField()
    los = models.FloatField(
        null=True, blank=True, help_text="Likelihood of superiority over the next bot."
    )
    games = models.PositiveIntegerField()
    losses = models.PositiveIntegerField()
    provisional = models.BooleanField()

    class Meta:
        verbose_name_plural = "fit entries"
        ordering = ["fit", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["fit", "bot"], name="one_fit_entry_per_bot"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id}: {self.rating:.0f} [{self.low:.0f}, {self.high:.0f}]"


class LadderMatch(models.Model):
    """A deal of a ladder table: one deck, dealt once in each seat rotation of its bots."""

    match = models.OneToOneField(
        "games.Match", on_delete=models.CASCADE, primary_key=True, related_name="ladder_entry"
    )
    pool = models.CharField(max_length=20)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Times a task started playing it (a task that died counts)."
    )
    table = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        db_index=True,
        help_text="The ladder table (its first deal's match) this deal is a rotation of.",
    )
    rotation = models.PositiveSmallIntegerField(
        default=0, help_text="Seat rotation of the table's bots in this deal."
    )
    deck_seed = models.CharField(
        max_length=64, blank=True, help_text="Secret seed of the table's one deck."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "ladder matches"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"ladder match {self.match_id} ({self.pool})"


class LadderPause(models.Model):
    """A bot kept off the ladder, e.g. after forfeiting repeatedly; delete it to resume."""

    bot = models.OneToOneField("bots.Bot", on_delete=models.CASCADE, related_name="ladder_pause")
    reason = models.CharField(max_length=300)
    paused_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.bot_id} paused: {self.reason}"


class SequentialTest(models.Model):
    """A sequential test of a candidate bot against a baseline on paired deals.

    The statistic is ``cardkit.stats.sprt``; ``docs/sequential-tests.md`` describes the
    modes and the defaults. Its matches are unrated: a test never touches a leaderboard.
    """

    class Mode(models.TextChoices):
        HEAD_TO_HEAD = "head_to_head", "Candidate against baseline, each deck twice"
        REFERENCE = "reference", "Each deck and seat once with each, beside reference players"

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        ACCEPTED = "accepted", "H1 accepted: the candidate is better"
        REJECTED = "rejected", "H0 accepted: the candidate is not better"
        CAPPED = "capped", "Undecided at the cap on games"
        CANCELLED = "cancelled", "Cancelled"

    DONE = (Status.ACCEPTED, Status.REJECTED, Status.CAPPED, Status.CANCELLED)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sequential_tests"
    )
    candidate = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="+")
    candidate_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    baseline = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="+")
    baseline_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reference = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Reference mode: the built-in bot in the other seats.",
    )  # fmt: skip
    game = models.CharField(max_length=20)
    players = models.PositiveSmallIntegerField()
    mode = models.CharField(max_length=12, choices=Mode.choices)
    model = models.CharField(max_length=12, default="normalized")
    elo0 = models.FloatField()
    elo1 = models.FloatField()
    alpha = models.FloatField()
    beta = models.FloatField()
    max_games = models.PositiveIntegerField()
    move_time_limit = models.FloatField(default=5.0)
    # Secret while the test runs, like a match's seed: the decks are dealt from it.
    seed = models.CharField(max_length=64)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.RUNNING, db_index=True
    )
    counts = models.JSONField(default=list, help_text="Pairs scoring 0, 0.5, 1, 1.5, 2.")
    llr = models.FloatField(default=0.0)
    # The LLR after each finished pair, for the page's chart.
    llr_history = models.JSONField(default=list)
    pairs_created = models.PositiveIntegerField(default=0)
    pairs_done = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"test {self.pk}: {self.candidate_id} vs {self.baseline_id} {self.status}"


class SequentialPair(models.Model):
    """Two games of a test on one deck: ``first`` and ``second``, played one after the
    other by one task."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    test = models.ForeignKey(SequentialTest, on_delete=models.CASCADE, related_name="pairs")
    index = models.PositiveIntegerField()
    deck = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField(help_text="Reference mode: the tested seat.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    first = models.ForeignKey(
        "games.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    second = models.ForeignKey(
        "games.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The candidate's points over the two, doubled (0-4)."
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["test", "index"]
        constraints = [
            models.UniqueConstraint(fields=["test", "index"], name="one_pair_per_index"),
        ]

    def __str__(self) -> str:
        return f"test {self.test_id} pair {self.index}: {self.status}"
