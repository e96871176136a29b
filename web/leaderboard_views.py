"""The home page and the leaderboards of the rating pools."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from games.catalog import GAME_CATALOG
from games.models import Match
from tournaments import selectors as ratings
from tournaments.models import Tournament
from tournaments.pools import POOLS, pool_title
from web import selectors
from web.charts import sparkline


def _pools() -> list[dict]:
    return [{"key": pool, "title": pool_title(pool)} for pool in POOLS]


# --- Home -------------------------------------------------------------------------------


def home(request: HttpRequest) -> HttpResponse:
    boards = []
    for pool in POOLS:
        fit, lines = ratings.leaderboard(pool)
        boards.append({"key": pool, "title": pool_title(pool), "lines": lines[:5]})
    running = Tournament.objects.filter(status=Tournament.Status.RUNNING).order_by("-started_at")
    return render(
        request,
        "web/home.html",
        {
            "games": GAME_CATALOG,
            "boards": boards,
            "running": running[:6],
            "recent": selectors.recent_finished_matches(10),
            "live_count": Match.objects.filter(status=Match.Status.ACTIVE).count(),
        },
    )


# --- Leaderboards -----------------------------------------------------------------------


def leaderboard_index(request: HttpRequest) -> HttpResponse:
    return redirect("web:leaderboard", pool=POOLS[0])


def leaderboard(request: HttpRequest, pool: str) -> HttpResponse:
    if pool not in POOLS:
        raise Http404(f"No rating pool {pool!r}.")
    fit, lines = ratings.leaderboard(pool)
    bot_ids = [line.bot_id for line in lines]
    owners = selectors.bot_owners(bot_ids)
    trends = selectors.pool_trends(pool, bot_ids)
    rows = []
    for line in lines:
        trend = trends.get(line.bot_id, [])
        rows.append(
            {
                "line": line,
                "owner": owners.get(line.bot_id, ""),
                "trend": sparkline(trend),
                "trend_delta": (trend[-1] - trend[0]) if len(trend) > 1 else None,
                "interval": (line.high - line.low) / 2 if line.rating is not None else None,
            }
        )
    return render(
        request,
        "web/leaderboard.html",
        {
            "pool": pool,
            "pool_title": pool_title(pool),
            "pools": _pools(),
            "fit": fit,
            "rows": rows,
        },
    )
