"""The tournament pages and the sequential-test pages."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import SafeString, mark_safe

from bots.models import Bot, BotVersion
from cardserver.pagination import CappedPaginator
from games.selectors import matches_for_listing
from tournaments import selectors as ratings
from tournaments import sequential
from tournaments.models import SequentialTest, Tournament, TournamentMatch
from web import selectors
from web.charts import llr_chart

# --- Tournaments ------------------------------------------------------------------------


def tournament_list(request: HttpRequest) -> HttpResponse:
    tournaments = Tournament.objects.select_related("created_by").order_by("-created_at", "-id")
    status = request.GET.get("status", "")
    if status in Tournament.Status.values:
        tournaments = tournaments.filter(status=status)
    page = CappedPaginator(tournaments, 30).get_page(request.GET.get("page"))
    return render(
        request,
        "web/tournament_list.html",
        {"page": page, "status": status, "statuses": Tournament.Status.choices},
    )


def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    tournament = get_object_or_404(Tournament.objects.select_related("created_by"), pk=pk)
    standings = ratings.tournament_standings(tournament)
    order = [line.bot_id for line in standings.lines]
    crosstable = [
        {"line": line, "cells": cells, "html": _cells_html(cells)}
        for line in standings.lines
        for cells in [_row_cells(standings.crosstable[line.bot_id], line.bot_id, order)]
    ]
    decks = [
        {"deck": deck, "html": _points_html([scores.get(bot_id, 0.0) for bot_id in order])}
        for deck, scores in standings.decks.items()
    ]
    recent = (
        TournamentMatch.objects.filter(tournament=tournament, match__isnull=False)
        .exclude(status=TournamentMatch.Status.PENDING)
        .order_by("-updated_at", "-index")
        .values_list("match_id", flat=True)[:12]
    )
    matches = selectors.match_lines(
        matches_for_listing().filter(pk__in=list(recent)).order_by("-created_at", "-id")
    )
    progress = ratings.tournament_progress(tournament)
    context = {
        "tournament": tournament,
        "progress": progress,
        "percent": 100 * tournament.matches_done // max(tournament.matches_total, 1),
        "standings": standings.lines,
        "names": [line.name for line in standings.lines],
        "crosstable": crosstable,
        "decks": decks,
        "matches": matches,
        "running": tournament.status == Tournament.Status.RUNNING,
    }
    template = "web/tournament_live.html" if request.GET.get("partial") else "web/tournament.html"
    return render(request, template, context)


def _row_cells(row: dict[int, tuple[float, int]], bot_id: int, order: list[int]) -> list:
    return [None if other == bot_id else _cell(*row[other]) for other in order]


def _cell(score: float, games: int) -> dict:
    tone = "" if not games or score * 2 == games else "good" if score * 2 > games else "bad"
    return {"score": score, "games": games, "tone": tone}


# A crosstable has a cell per pair of entrants: 2,500 for fifty bots, which Django's
# template language renders in hundreds of milliseconds (a lookup per variable, a node per
# tag). The cells hold only numbers and fixed classes, so they are written here, in one
# pass; scores are halves, which ``.1f`` writes as ``floatformat:1`` does.
def _cells_html(cells: list) -> SafeString:
    parts = []
    for cell in cells:
        if cell is None:
            parts.append('<td class="self num">—</td>')
        elif not cell["games"]:
            parts.append('<td class="num muted">·</td>')
        else:
            score, games = f"{cell['score']:.1f}", cell["games"]
            parts.append(
                f'<td class="num {cell["tone"]}" title="{score} points in {games} games">'
                f'{score}<span class="muted small">/{games}</span></td>'
            )
    return mark_safe("".join(parts))  # noqa: S308 - numbers and fixed classes only


def _points_html(points: list[float]) -> SafeString:
    cells = "".join(f'<td class="num">{value:.1f}</td>' for value in points)
    return mark_safe(cells)  # noqa: S308 - numbers only


# --- Sequential tests -------------------------------------------------------------------


def sequential_test_detail(request: HttpRequest, pk: int) -> HttpResponse:
    test = get_object_or_404(
        SequentialTest.objects.select_related(
            "candidate", "candidate_version", "baseline", "baseline_version", "reference",
            "created_by",
        ),
        pk=pk,
    )  # fmt: skip
    summary = sequential.sequential_test_summary(test)
    running = test.status == SequentialTest.Status.RUNNING
    context = {
        "test": test,
        "summary": summary,
        "outcomes": list(zip(("0", "0.5", "1", "1.5", "2"), test.counts, strict=True)),
        "chart": llr_chart(test.llr_history, summary["llr_lower"], summary["llr_upper"]),
        "running": running,
        "percent": min(100, 100 * 2 * test.pairs_done // max(test.max_games, 1)),
        "matches": [] if running else sequential.sequential_test_matches(test),
        "candidate": _version_name(test.candidate, test.candidate_version),
        "baseline": _version_name(test.baseline, test.baseline_version),
    }
    template = "web/test_live.html" if request.GET.get("partial") else "web/test.html"
    return render(request, template, context)


def _version_name(bot: Bot, version: BotVersion | None) -> str:
    return f"{bot.name}@{version.label}" if version is not None else bot.name
