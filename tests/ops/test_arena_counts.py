"""The soaks' match counts come from the database: the API's match list pages by cursor
and has no ``count`` (their reports said ``unavailable: KeyError 'count'``)."""

from benchmarks.arena_counts import archive_counts
from tests.matches import finished_bot_match


def test_the_soaks_archive_counts_count_each_figure_from_the_database(db):
    finished_bot_match([None, None], loser=0)
    finished_bot_match([None, None], loser=1, forfeit=1, reason="forfeit")
    finished_bot_match([None, None], loser=0, reason="timeout")
    finished_bot_match([None, None], loser=None, status="aborted", reason="")
    finished_bot_match([None, None], loser=None, status="active", reason="")

    assert archive_counts() == {
        "finished": 3, "aborted": 1, "forfeited": 1, "timed_out": 1, "active": 1,
    }  # fmt: skip
