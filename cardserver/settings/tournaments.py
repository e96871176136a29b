"""Tournaments, ratings, the ladder and sequential tests."""

from cardserver.settings.env import env

# Elo's K for a two-player match; an N-player match uses K / (N - 1) per pair of players.
RATING_ELO_K = 16.0
# The batch fit holds this bot (by name) at this rating, so the scale does not drift.
RATING_ANCHOR_BOT = "random"
RATING_ANCHOR = 1000.0
RATING_BOOTSTRAPS = 200
# A bot stays provisional on the leaderboard while its 95% interval is wider than this.
RATING_PROVISIONAL_WIDTH = 200.0
# Times a tournament match may be started before its game exists, or a ladder deal's
# task may fail or die, before it is given up as aborted: a match that kills its worker
# cannot loop for ever. A worker that dies while it plays a match is found by its lapsed
# claim and counted by the bot driver (BOTS_TURN_MAX_LAPSES), never by the time since
# the last move.
TOURNAMENT_MAX_ATTEMPTS = 3
# Seconds a pending match of the current round may wait before the watchdog sends it
# again (its round was never sent); long, since a match may wait behind a long queue.
TOURNAMENT_STALE_AFTER = 300.0
# Backpressure (tournaments/backpressure.py): tournament matches sent to the workers and
# not yet finished, at most this many per tournament, per owner (over all their
# tournaments) and in all; the others wait in the database, not in the broker's queue,
# and are sent as slots free. So one big tournament queues at most a few tasks ahead of
# the ladder's and of other owners' matches.
TOURNAMENT_IN_FLIGHT_PER_TOURNAMENT = env.TOURNAMENT_IN_FLIGHT_PER_TOURNAMENT
TOURNAMENT_IN_FLIGHT_PER_OWNER = env.TOURNAMENT_IN_FLIGHT_PER_OWNER
TOURNAMENT_IN_FLIGHT = env.TOURNAMENT_IN_FLIGHT
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
SEQUENTIAL_TEST_MAX_GAMES = env.SEQUENTIAL_TEST_MAX_GAMES
SEQUENTIAL_GAMES_IN_FLIGHT = env.SEQUENTIAL_GAMES_IN_FLIGHT
SEQUENTIAL_TESTS_PER_DAY = env.SEQUENTIAL_TESTS_PER_DAY
