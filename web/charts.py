"""Charts drawn on the server as inline SVG: no script and no chart library needed.

``rating_charts`` draws a bot's rating history: its Elo after each rated match, and the
batch fits' ratings with their 95% intervals, one line per rating pool.
``sparkline`` draws the small trend line of a leaderboard row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

# One colour per pool, readable on white and told apart by people with common forms of
# colour blindness (Okabe-Ito palette).
POOL_COLOURS = {
    "durak-2p": "#0072b2",
    "durak-3p": "#d55e00",
    "durak-4p": "#009e73",
    "volynshchik-2p": "#cc79a7",
    "volynshchik-3p": "#e69f00",
    "volynshchik-4p": "#56b4e9",
    "volynshchik-5p": "#000000",
}
FALLBACK_COLOUR = "#555555"
# The bot page shows two charts side by side: a narrower drawing keeps its text readable.
CHART_SIZE = {"width": 480, "height": 260}


@dataclass
class Series:
    label: str
    colour: str
    points: list[tuple[float, float]]
    # (x, rating, low, high): fitted ratings with their intervals.
    intervals: list[tuple[float, float, float, float]] = field(default_factory=list)


def _nice_step(span: float, ticks: int) -> float:
    raw = span / max(ticks, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def line_chart(
    series: list[Series],
    *,
    width: int = 720,
    height: int = 280,
    x_label: str = "",
    y_label: str = "",
    title: str = "",
    marks: list[tuple[float, str, str]] = (),
) -> SafeString:
    """Return an SVG line chart of ``series`` that scales to its container.

    ``marks`` are vertical lines ``(x, label, colour)``, e.g. where a bot's version changed.
    """
    left, right, top, bottom = 56, 16, 16, 40
    xs = [x for s in series for x, _ in s.points] + [x for s in series for x, *_ in s.intervals]
    ys = [y for s in series for _, y in s.points]
    ys += [v for s in series for _, _, low, high in s.intervals for v in (low, high)]
    if not xs:
        return mark_safe("")
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    y_step = _nice_step(max(ys) - min(ys) or 20, 5)
    y0 = math.floor(min(ys) / y_step) * y_step
    y1 = math.ceil(max(ys) / y_step) * y_step
    if y1 == y0:
        y1 = y0 + y_step
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return round(left + (x - x0) / (x1 - x0) * plot_w, 1)

    def py(y: float) -> float:
        return round(top + (y1 - y) / (y1 - y0) * plot_h, 1)

    parts: list[str] = []
    y = y0
    while y <= y1 + 1e-9:
        parts.append(
            format_html(
                '<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"></line>'
                '<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>',
                left, width - right, py(y), py(y), left - 6, py(y) + 4, f"{y:.0f}",
            )
        )  # fmt: skip
        y += y_step
    x_step = max(1, _nice_step(x1 - x0, 8))
    x = math.ceil(x0 / x_step) * x_step
    while x <= x1 + 1e-9:
        parts.append(
            format_html(
                '<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>',
                px(x), height - bottom + 16, f"{x:.0f}",
            )
        )  # fmt: skip
        x += x_step
    parts.append(
        format_html(
            '<line class="axis" x1="{}" x2="{}" y1="{}" y2="{}"></line>',
            left, width - right, height - bottom, height - bottom,
        )
    )  # fmt: skip
    if x_label:
        parts.append(
            format_html(
                '<text class="label" x="{}" y="{}" text-anchor="middle">{}</text>',
                left + plot_w / 2, height - 6, x_label,
            )
        )  # fmt: skip
    if y_label:
        parts.append(
            format_html(
                '<text class="label" x="14" y="{}" text-anchor="middle" '
                'transform="rotate(-90 14 {})">{}</text>',
                top + plot_h / 2, top + plot_h / 2, y_label,
            )
        )  # fmt: skip
    for x, label, colour in marks:
        if x0 <= x <= x1:
            parts.append(
                format_html(
                    '<g class="mark"><line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" '
                    'stroke-dasharray="4 3"><title>{}</title></line>'
                    '<text class="tick" x="{}" y="{}" text-anchor="start">{}</text></g>',
                    px(x), px(x), top, height - bottom, colour, label,
                    px(x) + 3, top + 10, label,
                )
            )  # fmt: skip
    for s in series:
        if len(s.intervals) > 1:
            band = [(px(x), py(high)) for x, _, _, high in s.intervals]
            band += [(px(x), py(low)) for x, _, low, _ in reversed(s.intervals)]
            parts.append(
                format_html(
                    '<polygon class="band" points="{}" fill="{}"></polygon>',
                    " ".join(f"{x},{y}" for x, y in band),
                    s.colour,
                )
            )
        for x, rating, low, high in s.intervals:
            parts.append(
                format_html(
                    '<g class="interval" stroke="{}"><line x1="{}" x2="{}" y1="{}" y2="{}">'
                    '</line><rect x="{}" y="{}" width="7" height="7" fill="{}">'
                    "<title>{}: fitted {} (95%: {} – {})</title></rect></g>",
                    s.colour, px(x), px(x), py(low), py(high),
                    px(x) - 3.5, py(rating) - 3.5, s.colour,
                    s.label, f"{rating:.0f}", f"{low:.0f}", f"{high:.0f}",
                )
            )  # fmt: skip
        if s.points:
            path = " ".join(
                f"{'M' if i == 0 else 'L'}{px(x)},{py(y)}" for i, (x, y) in enumerate(s.points)
            )
            parts.append(
                format_html(
                    '<path class="line" d="{}" stroke="{}" data-series="{}"></path>',
                    path, s.colour, s.label,
                )
            )  # fmt: skip
            if len(s.points) <= 60:
                parts.append(
                    format_html_join(
                        "",
                        '<circle cx="{}" cy="{}" r="2.5" fill="{}"><title>{}</title></circle>',
                        (
                            (px(x), py(y), s.colour, f"{s.label} after match {x:.0f}: {y:.0f}")
                            for x, y in s.points
                        ),
                    )
                )
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" '
        'preserveAspectRatio="xMidYMid meet">{}</svg>',
        width,
        height,
        title or "chart",
        mark_safe("".join(parts)),
    )


def rating_charts(history: dict, versions: list[tuple] = ()) -> dict[str, SafeString]:
    """Draw ``tournaments.selectors.bot_rating_history`` as two charts, one line per pool.

    ``elo``: the live Elo after each rated match. ``fit``: the batch fits' ratings with
    their 95% intervals as a band. The two are on different scales (Elo starts at 1500,
    the fit holds its anchor bot at 1000), so they are not drawn on one axis. Both x axes
    count the bot's rated matches in the pool; a fit is drawn at the number of the bot's
    matches it had seen. A history of the newest changes only (numbered) is drawn from
    the number of its first.
    """
    elo: dict[str, Series] = {}
    fits: dict[str, Series] = {}
    times: dict[str, list] = {}
    first: dict[str, int] = {}
    for number, change in _numbered(history["elo"]):
        pool = change["pool"]
        series = elo.setdefault(pool, Series(pool, POOL_COLOURS.get(pool, FALLBACK_COLOUR), []))
        if not series.points:
            first[pool] = number - 1
            series.points.append((number - 1, change["before"]))
        series.points.append((number, change["after"]))
        times.setdefault(pool, []).append(change["created_at"])
    for fit in history["fits"]:
        pool = fit["pool"]
        series = fits.setdefault(pool, Series(pool, POOL_COLOURS.get(pool, FALLBACK_COLOUR), []))
        seen = fit.get("games")
        if seen is None:
            seen = first.get(pool, 0) + sum(1 for t in times.get(pool, []) if t <= fit["fitted_at"])
        series.points.append((seen, fit["rating"]))
        series.intervals.append((seen, fit["rating"], fit["low"], fit["high"]))
    # A version that started after the bot's n-th rated match of a pool is marked at n
    # (when n is on the chart: a version older than the first change drawn is not).
    marks = [
        (first[pool] + after, label, elo[pool].colour)
        for started, label in versions[1:]
        for pool in elo
        if (after := sum(1 for t in times[pool] if t <= started)) or not first[pool]
    ]
    charts = {}
    if elo:
        charts["elo"] = line_chart(
            list(elo.values()),
            x_label="rated matches",
            y_label="Elo",
            title="Elo history",
            marks=marks,
            **CHART_SIZE,
        )
    if fits:
        charts["fit"] = line_chart(
            list(fits.values()),
            x_label="rated matches",
            y_label="rating (95% interval)",
            title="Fitted rating history",
            **CHART_SIZE,
        )
    return charts


def _numbered(changes: list[dict]):
    counts: dict[str, int] = {}
    for change in changes:
        counts[change["pool"]] = change.get("number") or counts.get(change["pool"], 0) + 1
        yield counts[change["pool"]], change


def sparkline(values: list[float], *, width: int = 96, height: int = 24) -> SafeString:
    """Return a small SVG line of ``values`` (green when the last is above the first)."""
    if len(values) < 2:
        return mark_safe('<span class="muted">–</span>')
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (width - 4) / (len(values) - 1)
    points = " ".join(
        f"{2 + i * step:.1f},{2 + (high - v) / span * (height - 4):.1f}"
        for i, v in enumerate(values)
    )
    trend = "up" if values[-1] > values[0] else "down" if values[-1] < values[0] else "flat"
    return format_html(
        '<svg class="spark {}" viewBox="0 0 {} {}" width="{}" height="{}" aria-hidden="true">'
        '<polyline points="{}"></polyline></svg>',
        trend, width, height, width, height, points,
    )  # fmt: skip


def running_score_chart(
    name: str, other: str, points: list[float], *, games_before: int = 0, net_before: float = 0.0
) -> SafeString:
    """Draw ``name``'s points minus ``other``'s, summed game by game, oldest first.

    ``points`` may be the newest games only: ``games_before`` older games left
    ``net_before`` on the running score, where the line starts.
    """
    if not points:
        return mark_safe("")
    net, total = [(games_before, net_before)], net_before
    for number, point in enumerate(points, start=games_before + 1):
        total += 2 * point - 1
        net.append((number, total))
    return line_chart(
        [Series(f"{name} - {other}", POOL_COLOURS["durak-2p"], net)],
        x_label="games", y_label=f"{name}'s points minus {other}'s",
        title=f"Running score of {name} against {other}",
    )  # fmt: skip


def llr_chart(history: list[float], lower: float, upper: float) -> SafeString:
    """Draw a sequential test's LLR after each pair between its two bounds."""
    pairs = max(len(history), 1)
    return line_chart(
        [
            Series("upper bound (accept H1)", "#067647", [(0, upper), (pairs, upper)]),
            Series("lower bound (accept H0)", "#b42318", [(0, lower), (pairs, lower)]),
            Series("LLR", POOL_COLOURS["durak-2p"], [(0, 0.0)] + [
                (number, value) for number, value in enumerate(history, start=1)
            ]),
        ],
        x_label="pairs", y_label="log-likelihood ratio", title="LLR over pairs",
    )  # fmt: skip
