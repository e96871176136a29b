"""The archive's counts for the soaks' reports, read from the arena's database: run in a
process set up on the arena's settings.

The API's match list pages by cursor and counts nothing (``cardserver.pagination``), so a
soak that asked it for ``count`` reported ``unavailable: KeyError 'count'``."""

from __future__ import annotations

# Each figure the soak reports, and the filter that counts it.
FIGURES = {
    "finished": {"status": "finished"},
    "aborted": {"status": "aborted"},
    "forfeited": {"end_reason": "forfeit"},
    "timed_out": {"end_reason": "timeout"},
    "active": {"status": "active"},
}


def archive_counts() -> dict[str, int]:
    """How many matches the arena holds of each figure in ``FIGURES``."""
    from django.db.models import Count, Q

    from games.models import Match

    return Match.objects.aggregate(
        **{name: Count("pk", filter=Q(**where)) for name, where in FIGURES.items()}
    )
