"""Tournaments, ratings, the ladder and sequential tests."""

import os

# Elo's K for a two-player match; an N-player match uses K / (N - 1) per pair of players.
RATING_ELO_K = 16.0
# The batch fit holds this bot (by name) at this rating, so the scale does not drift.
RATING_ANCHOR_BOT = "random"
RATING_ANCHOR = 1000.0
RATING_BOOTSTRAPS = 200
# A bot stays provisional on the leaderboard while its 95% interval is wider than this.
RATING_PROVISIONAL_WIDTH = 200.0
# Times a tournament or ladder match may be started (a worker that died counts) before it
# is given up as aborted: a match that kills its worker cannot loop for ever.
TOURNAMENT_MAX_ATTEMPTS = 3
# Seconds a running tournament match may go without a move, and with no bot driver's live
# claim on it, before the watchdog (every 10 s) sends it to a worker again: its worker
# died with the broker message unacknowledged, and a driver's claim lapses within
# seconds of its death (bots.driver), so the match is taken up within about 30 s.
TOURNAMENT_ABANDONED_AFTER = float(os.environ.get("TOURNAMENT_ABANDONED_AFTER") or 15.0)
# Seconds a pending match of the current round may wait before the watchdog sends it
# again (its round was never sent); long, since a match may wait behind a long queue.
TOURNAMENT_STALE_AFTER = 300.0
# The ladder: which tables it fills, how many per tick (beat runs the tick; its interval
# is in the admin), how many of its matches may be unfinished at once, and after how many
# forfeits in a row a bot is paused. The tables: every shape that has a rating pool
# (tournaments.pools.POOLS).
LADDER_TABLES = [
    ["durak", 2], ["durak", 3], ["durak", 4],
    ["volynshchik", 2], ["volynshchik", 3], ["volynshchik", 4], ["volynshchik", 5],
]  # fmt: skip
LADDER_TABLES_PER_TICK = 1
LADDER_MAX_ACTIVE = 20
LADDER_PAUSE_AFTER_FORFEITS = 3

# Sequential tests (tournaments/sequential.py, docs/sequential-tests.md): the defaults of
# a test, the largest cap on games one may ask for, and per user the games in flight at
# once (over all their tests; a pair is two games) and the tests started in 24 hours
# (staff are not counted).
SEQUENTIAL_TEST_DEFAULTS = {
    "elo0": 0.0, "elo1": 20.0, "alpha": 0.05, "beta": 0.05, "max_games": 4000,
    "move_time_limit": 5.0,
}
SEQUENTIAL_TEST_MAX_GAMES = int(os.environ.get("SEQUENTIAL_TEST_MAX_GAMES") or 20000)
SEQUENTIAL_GAMES_IN_FLIGHT = int(os.environ.get("SEQUENTIAL_GAMES_IN_FLIGHT") or 8)
SEQUENTIAL_TESTS_PER_DAY = int(os.environ.get("SEQUENTIAL_TESTS_PER_DAY") or 20)
