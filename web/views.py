"""The match pages (archive, replay, verification), playing, and accounts. Each view reads
through selectors and renders a template; pages that change while one looks at them
(replay, play, a running tournament) fetch the JSON API or their own page again from a small
script. The other pages: web.leaderboard_views, web.bot_views, web.tournament_views."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import auth, messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods

from accounts import services as account_services
from bots.models import Bot
from bots.services import BUILTIN_PLAYERS, SYSTEM_USERNAME
from cardserver.pagination import COUNT_CAP, CappedPaginator
from games.catalog import GAME_CATALOG
from games.filters import MatchFilter
from games.models import Match, Seat
from games.reading import match_fairness, match_forfeit_reason, match_reading
from games.seats_held import seats_of
from games.selectors import (
    match_for_reading,
    matches_for_listing,
    seat_name,
)
from games.verification import match_verification
from tournaments.models import TournamentMatch
from web import selectors
from web.forms import ArchiveFilterForm, SignupForm

ARCHIVE_PAGE_SIZE = 25


# --- Matches ----------------------------------------------------------------------------


def archive(request: HttpRequest) -> HttpResponse:
    form = ArchiveFilterForm(request.GET or None)
    # By id, as the API's cursor pages (cardserver.pagination): an index walk, filtered
    # or not.
    matches = matches_for_listing().order_by("-id")
    api_query = ""
    if form.is_bound and form.is_valid():
        api_query = urlencode(form.filter_data())
        matches = MatchFilter(form.filter_data(), queryset=matches).qs
        if form.cleaned_data.get("result") == "forfeit":
            matches = matches.filter(forfeit_seat__isnull=False)
    # The count stops one page past the page shown ("Page 1 of 2+"): a filtered count walks
    # the filter's index until it has counted, and a pair's 10,000th match lies a hundred
    # thousand seats back in a million-match archive; one page on is as far back as the
    # page's own walk goes.
    number = request.GET.get("page", "")
    shown = int(number) if number.isdigit() and 0 < int(number) <= COUNT_CAP else 1
    page = CappedPaginator(
        matches, ARCHIVE_PAGE_SIZE, cap=(shown + 1) * ARCHIVE_PAGE_SIZE
    ).get_page(number or None)
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
            "name": seat_name(seats.get(index)),
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
        "forfeit_reason": match_forfeit_reason(match),
        "end_reason": match.end_reason,
        "result": match.result,
        "start_ply": _int_or_none(request.GET.get("ply")),
        # The clock of the seat to move, for spectators (the stream brings the next ones).
        "deadline_at": match.deadline_at if match.status == Match.Status.ACTIVE else None,
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
            "can_replay": match.status in (Match.Status.ACTIVE, Match.Status.FINISHED)
            and match_reading(match).public,
            "fairness": match_fairness(match),
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
    verification = match_verification(match) if match_reading(match).complete else None
    return render(
        request,
        "web/verify.html",
        {"match": match, "verification": verification, "fairness": match_fairness(match)},
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
