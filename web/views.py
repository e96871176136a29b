"""The pages. Each view reads through selectors and renders a template; pages that
change while one looks at them (replay, play, a running tournament) fetch the JSON API
or their own page again from a small script."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import auth, messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods

from accounts import services as account_services
from bots import headtohead, versions
from bots.models import Bot, BotVersion
from bots.services import BUILTIN_PLAYERS, SYSTEM_USERNAME
from games.catalog import GAME_CATALOG
from games.filters import MatchFilter
from games.models import Match, Seat
from games.selectors import match_for_reading, match_verification, matches_for_listing, seats_of
from tournaments import selectors as ratings
from tournaments import sequential
from tournaments.models import Rating, SequentialTest, Tournament, TournamentMatch
from tournaments.pools import POOLS, pool_title
from tournaments.version_ratings import version_ratings
from web import selectors
from web.charts import POOL_COLOURS, llr_chart, rating_charts, running_score_chart, sparkline
from web.forms import ArchiveFilterForm, SignupForm

ARCHIVE_PAGE_SIZE = 25
# The versus page lists this many of the newest matches; its chart draws them all.
VERSUS_LINES = 100


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


# --- Leaderboards and bots --------------------------------------------------------------


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


def bot_list(request: HttpRequest) -> HttpResponse:
    bots = Bot.objects.select_related("owner").order_by("name")
    return render(request, "web/bot_list.html", {"bots": bots})


def bot_detail(request: HttpRequest, name: str) -> HttpResponse:
    if "@" in name:
        # bot@label: the version's line is on its bot's page.
        try:
            bot, _ = versions.bot_and_version(name)
        except (Bot.DoesNotExist, BotVersion.DoesNotExist):
            raise Http404("No such bot or version.") from None
        return redirect(reverse("web:bot", args=[bot.name]) + "#versions")
    bot = get_object_or_404(Bot.objects.select_related("owner"), name__iexact=name)
    history = ratings.bot_rating_history(bot.pk)
    pool_ratings = {r.pool: r for r in Rating.objects.filter(bot=bot)}
    latest_fits = {fit["pool"]: fit for fit in history["fits"]}
    pools = [
        {
            "key": pool,
            "title": pool_title(pool),
            "colour": POOL_COLOURS.get(pool),
            "rating": pool_ratings.get(pool),
            "fit": latest_fits.get(pool),
        }
        for pool in POOLS
        if pool in pool_ratings or pool in latest_fits
    ]
    version_lines = versions.bot_version_lines(bot=bot)
    fitted = version_ratings(bot=bot)
    for line in version_lines:
        line["ratings"] = [
            {"title": pool_title(r.pool), **vars(r)} for r in fitted.get(line["id"], [])
        ]
    return render(
        request,
        "web/bot_detail.html",
        {
            "bot": bot,
            "versions": version_lines,
            "charts": rating_charts(
                history, [(line["created_at"], line["label"]) for line in version_lines]
            ),
            "pools": pools,
            "matches": selectors.bot_matches(bot),
            "forfeits": selectors.bot_forfeits(bot),
            "forfeit_count": selectors.bot_forfeit_count(bot),
            "opponents": headtohead.bot_opponents(mine={"bot_id": bot.pk}),
        },
    )


def bot_versus(request: HttpRequest, name: str, other: str) -> HttpResponse:
    """Two bots' matches against each other and the first one's running score."""
    try:
        bot, version = versions.bot_and_version(name)
    except (Bot.DoesNotExist, BotVersion.DoesNotExist):
        raise Http404("No such bot or version.") from None
    opponent = get_object_or_404(Bot, name__iexact=other)
    lines = headtohead.bot_pairings(mine=versions.seats_of(bot, version), opponent_id=opponent.pk)
    points = sum(line.points for line in lines)
    return render(
        request,
        "web/bot_versus.html",
        {
            "bot": bot,
            "name": f"{bot.name}@{version.label}" if version else bot.name,
            "opponent": opponent,
            "lines": lines[::-1][:VERSUS_LINES],
            "more": max(len(lines) - VERSUS_LINES, 0),
            "games": len(lines),
            "points": points,
            "interval": headtohead.score_interval(points, len(lines)),
            "chart": running_score_chart(name, opponent.name, [x.points for x in lines]),
        },
    )


# --- Tournaments ------------------------------------------------------------------------


def tournament_list(request: HttpRequest) -> HttpResponse:
    tournaments = Tournament.objects.select_related("created_by").order_by("-created_at", "-id")
    status = request.GET.get("status", "")
    if status in Tournament.Status.values:
        tournaments = tournaments.filter(status=status)
    page = Paginator(tournaments, 30).get_page(request.GET.get("page"))
    return render(
        request,
        "web/tournament_list.html",
        {"page": page, "status": status, "statuses": Tournament.Status.choices},
    )


def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    tournament = get_object_or_404(
        Tournament.objects.select_related("created_by").prefetch_related("entries__bot"), pk=pk
    )
    standings = ratings.tournament_standings(tournament)
    names = {line.bot_id: line.name for line in standings.lines}
    order = [line.bot_id for line in standings.lines]
    crosstable = [
        {
            "line": line,
            "cells": [
                None if other == line.bot_id else _cell(*standings.crosstable[line.bot_id][other])
                for other in order
            ],
        }
        for line in standings.lines
    ]
    decks = [
        {"deck": deck, "scores": [scores.get(bot_id, 0.0) for bot_id in order]}
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
        "names": [names[bot_id] for bot_id in order],
        "crosstable": crosstable,
        "decks": decks,
        "matches": matches,
        "running": tournament.status == Tournament.Status.RUNNING,
    }
    template = "web/tournament_live.html" if request.GET.get("partial") else "web/tournament.html"
    return render(request, template, context)


def _cell(score: float, games: int) -> dict:
    tone = "" if not games or score * 2 == games else "good" if score * 2 > games else "bad"
    return {"score": score, "games": games, "tone": tone}


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


# --- Matches ----------------------------------------------------------------------------


def archive(request: HttpRequest) -> HttpResponse:
    form = ArchiveFilterForm(request.GET or None)
    matches = matches_for_listing().order_by("-created_at", "-id")
    api_query = ""
    if form.is_bound and form.is_valid():
        api_query = urlencode(form.filter_data())
        matches = MatchFilter(form.filter_data(), queryset=matches).qs
        if form.cleaned_data.get("result") == "forfeit":
            matches = matches.filter(forfeit_seat__isnull=False)
    page = Paginator(matches, ARCHIVE_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "web/archive.html",
        {
            "form": form if form.is_bound else ArchiveFilterForm(),
            "page": page,
            "lines": selectors.match_lines(page.object_list),
            "query": query.urlencode(),
            "api_query": api_query,
            "bot_names": Bot.objects.order_by("name").values_list("name", flat=True)[:500],
        },
    )


def _match_or_404(pk: int) -> Match:
    try:
        return match_for_reading(pk)
    except Match.DoesNotExist:
        raise Http404("No match with this id.") from None


def _seat_data(match: Match) -> list[dict]:
    seats = {seat.index: seat for seat in match.seats.all()}
    return [
        {
            "index": index,
            "name": selectors.seat_name(seats.get(index)),
            "kind": "bot" if seats.get(index) and seats[index].bot_id else "user",
            "url": reverse("web:bot", args=[seats[index].bot.name])
            if seats.get(index) and seats[index].bot_id
            else None,
        }
        for index in range(match.players)
    ]


def match_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The replay viewer of a match (and a spectator's view of one in play)."""
    match = _match_or_404(pk)
    line = selectors.match_lines([match])[0]
    mine = seats_of(request.user, match)
    tournament_match = (
        TournamentMatch.objects.filter(match=match).select_related("tournament").first()
    )
    config = {
        "match": match.pk,
        "game": match.game,
        "format": match.format,
        "status": match.status,
        "players": match.players,
        "seats": _seat_data(match),
        "replay_url": reverse("match-replay", args=[match.pk]),
        "stream_url": reverse("match-stream", args=[match.pk]),
        "forfeit_seat": match.forfeit_seat,
        "forfeit_reason": match.forfeit_reason,
        "end_reason": match.end_reason,
        "result": match.result,
        "start_ply": _int_or_none(request.GET.get("ply")),
    }
    return render(
        request,
        "web/match.html",
        {
            "match": match,
            "line": line,
            "mine": mine,
            "tournament_match": tournament_match,
            "config": config,
            "can_replay": match.status in (Match.Status.ACTIVE, Match.Status.FINISHED),
        },
    )


def replay_open(request: HttpRequest) -> HttpResponse:
    """A replay file opened in the browser: the replay viewer, fed by the file, not the API."""
    # No replay_url: the viewer waits for the file (web/static/web/replay_open.js).
    config = {"game": None, "seats": [], "start_ply": None}
    return render(request, "web/replay_open.html", {"config": config})


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def match_verify(request: HttpRequest, pk: int) -> HttpResponse:
    match = _match_or_404(pk)
    verification = match_verification(match) if match.status == Match.Status.FINISHED else None
    return render(
        request,
        "web/verify.html",
        {"match": match, "verification": verification},
    )


# --- Playing ----------------------------------------------------------------------------


@login_required
@ensure_csrf_cookie
def play_lobby(request: HttpRequest) -> HttpResponse:
    """Start a match against built-in bots, join an open seat, or go back to a match."""
    user = request.user
    mine = Seat.objects.filter(Q(user=user) | Q(bot__account=user)).values("match_id")
    open_seat = Seat.objects.filter(user__isnull=True, bot__isnull=True).values("match_id")
    listing = matches_for_listing()
    waiting = listing.filter(status=Match.Status.WAITING)
    return render(
        request,
        "web/play_lobby.html",
        {
            "games": GAME_CATALOG,
            "builtin_names": [bot.name for bot in _builtin_bots()],
            "open_lines": selectors.match_lines(
                waiting.filter(pk__in=open_seat).exclude(pk__in=mine).order_by("-created_at")[:20]
            ),
            "my_active": selectors.match_lines(
                listing.filter(status=Match.Status.ACTIVE, pk__in=mine).order_by("-created_at")[:20]
            ),
            "my_waiting": selectors.match_lines(
                waiting.filter(pk__in=mine).order_by("-created_at")[:20]
            ),
            "my_finished": selectors.match_lines(
                listing.filter(status=Match.Status.FINISHED, pk__in=mine).order_by("-finished_at")[
                    :10
                ]
            ),
            "config": {
                "create_url": reverse("match-list"),
                "username": user.username,
                "play_url": reverse("web:play-match", args=[0]),
            },
        },
    )


def _builtin_bots() -> list[Bot]:
    """Return the arena's own built-in bots (not people's bots of the built-in kind)."""
    bots = Bot.objects.filter(
        kind=Bot.Kind.BUILTIN,
        enabled=True,
        name__in=BUILTIN_PLAYERS,
        owner__username=SYSTEM_USERNAME,
    )
    order = {name: index for index, name in enumerate(BUILTIN_PLAYERS)}
    return sorted(bots, key=lambda bot: order[bot.name])


@login_required
@ensure_csrf_cookie
def play_match(request: HttpRequest, pk: int) -> HttpResponse:
    match = _match_or_404(pk)
    mine = seats_of(request.user, match)
    if not mine and match.status != Match.Status.WAITING:
        return redirect("web:match", pk=pk)
    config = {
        "match": match.pk,
        "game": match.game,
        "format": match.format,
        "players": match.players,
        "seats": _seat_data(match),
        "me_url": reverse("match-me", args=[match.pk]),
        "stream_url": reverse("match-stream", args=[match.pk]),
        "moves_url": reverse("match-moves", args=[match.pk]),
        "join_url": reverse("match-join", args=[match.pk]),
        "detail_url": reverse("match-detail", args=[match.pk]),
        "resign_url": reverse("match-resign", args=[match.pk]),
        "replay_page": reverse("web:match", args=[match.pk]),
        "lobby": reverse("web:play"),
        "joined": bool(mine),
    }
    return render(
        request,
        "web/play.html",
        {"match": match, "config": config, "joined": bool(mine)},
    )


# --- Accounts ---------------------------------------------------------------------------


class SignInView(LoginView):
    template_name = "web/login.html"
    redirect_authenticated_user = True
    next_page = reverse_lazy("web:play")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user, _ = account_services.account_signup(
                username=form.cleaned_data["username"], password=form.cleaned_data["password"]
            )
        except account_services.SignupError as exc:
            for field, errors in exc.errors.items():
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
        else:
            auth.login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}. Your account is ready.")
            return redirect(request.GET.get("next") or "web:play")
    return render(request, "web/signup.html", {"form": form})


@require_http_methods(["POST"])
def signout(request: HttpRequest) -> HttpResponse:
    auth.logout(request)
    return redirect("web:home")
