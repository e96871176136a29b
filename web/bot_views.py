"""The bot pages: the list, a bot's page with its versions, and two bots head to head."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from bots import challenge_selectors, headtohead, versions
from bots.models import Bot, BotVersion
from tournaments import selectors as ratings
from tournaments.models import Rating
from tournaments.pools import POOLS, pool_title
from tournaments.version_ratings import version_ratings
from web import author_selectors, selectors
from web.charts import POOL_COLOURS, rating_charts, running_score_chart

# The versus page lists and draws this many of the newest matches.
VERSUS_LINES = 100
# The bot page's rating charts draw this many of the newest changes and fits per pool.
CHART_POINTS = 200


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
    history = ratings.bot_rating_history(bot.pk, points=CHART_POINTS)
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
            "pauses": author_selectors.bot_pauses(bot),
            # Those it was asked and those it sits in as a challenger's bot.
            "challenges": [
                challenge_selectors.challenge_data(c)
                for c in challenge_selectors.challenges_of_bot(bot)
            ],
        },
    )


def bot_versus(request: HttpRequest, name: str, other: str) -> HttpResponse:
    """Two bots' matches against each other and the first one's running score."""
    try:
        bot, version = versions.bot_and_version(name)
    except (Bot.DoesNotExist, BotVersion.DoesNotExist):
        raise Http404("No such bot or version.") from None
    opponent = get_object_or_404(Bot, name__iexact=other)
    mine = versions.seats_of(bot, version)
    # The totals come from the kept records; only the newest matches are read, listed and
    # drawn, so the page costs the same after ten matches as after a hundred thousand.
    total = headtohead.bot_pair_total(mine=mine, opponent_id=opponent.pk)
    lines = headtohead.bot_pairings(mine=mine, opponent_id=opponent.pk, limit=VERSUS_LINES)
    shown = sum(line.points for line in lines)
    games_before = max(total.games - len(lines), 0)
    net_before = (2 * total.points - total.games) - (2 * shown - len(lines))
    return render(
        request,
        "web/bot_versus.html",
        {
            "bot": bot,
            "name": f"{bot.name}@{version.label}" if version else bot.name,
            "opponent": opponent,
            "lines": lines[::-1],
            "more": games_before,
            "games": total.games,
            "points": total.points,
            "interval": headtohead.score_interval(total.points, total.games),
            "chart": running_score_chart(
                name, opponent.name, [x.points for x in lines],
                games_before=games_before, net_before=net_before,
            ),
        },
    )  # fmt: skip
