"""The leaderboard's 95% intervals at three to five players hold the rating they estimate
about 95% of the time (benchmarks.rating_coverage, with small sizes)."""

import pytest

from benchmarks.rating_coverage import coverage


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("luck", [0.0, 200.0], ids=["independent-deals", "duplicate-tables"])
def test_leaderboard_intervals_cover_about_95_percent_at_three_to_five_players(players, luck):
    row = coverage(players, matches=120, runs=40, bootstraps=60, seed=2, luck=luck)

    # 40 arenas of players + 1 rated bots: a few hundred cases, correlated within an
    # arena, so the band is wide; an interval of the curvature or the bootstrap alone
    # that were half as wide would cover about 66%.
    assert 0.90 <= row["shown_coverage"] <= 0.99
