"""Every kind of page on a phone (390 x 844) and on a laptop (1366 x 768), in Chromium.

On both: no page is wider than the screen, a fan of cards never hides a rank, and axe-core
finds no serious or critical accessibility violation. On the phone: the top of a
Volynshchik pile of 20 and every card of an 18-card Durak hand are on the screen, and every
cell of a data table is in view. On the laptop: the action bar (prompt, buttons, clock) of
every game and table size, and the hand above it, are in view without scrolling.

Screenshots go to ``artefacts/screenshots/`` (``layout-<page>-<size>.png``), axe's counts
per page to ``artefacts/axe-<size>.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from tests.web.conftest import SCREENSHOTS, BrowserPage
from tests.web.positions import hand_of, match_at, pile_of, taker_policy, to_move

pytestmark = pytest.mark.browser

SIZES = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}
TABLE = "#table .seat"  # a replay or a game page is ready once its table is drawn
PLAYING = "#table[data-state]"


@dataclass
class Site:
    """The pages to look at: (name, path, selector that says the page is ready)."""

    public: list[tuple[str, str, str | None]] = field(default_factory=list)
    games: list[tuple[str, str]] = field(default_factory=list)
    player: object = None


@pytest.fixture
def site(transactional_db, celery_eager, user_factory) -> Site:
    """A small arena, and practice matches at the start of every game and table size and
    in the two crowded positions (an 18-card Durak hand, a Volynshchik pile of 20)."""
    from games.models import Match
    from web.demo import demo_arena

    demo = demo_arena(rated_matches=3, fit_bootstraps=10, series=True)
    durak = demo.rated[0]
    series = next(m for m in demo.others if m.format == Match.Format.FOOL)
    volynshchik = next(m for m in demo.others if m.game == Match.Game.VOLYNSHCHIK)
    people = [user_factory(username=name) for name in ("player", "east", "north", "west", "south")]
    site = Site(player=people[0])
    for players in (2, 3, 4):
        match = match_at(people[:players], "durak", to_move(0))
        site.games.append((f"durak-{players}p", f"/play/{match.pk}/"))
    for players in (2, 3, 4, 5):
        match = match_at(people[:players], "volynshchik", to_move(0))
        site.games.append((f"volynshchik-{players}p", f"/play/{match.pk}/"))
    hand = match_at(people[:2], "durak", hand_of(0, 18), policy=taker_policy)
    site.games.append(("durak-hand-18", f"/play/{hand.pk}/"))
    pile = match_at(people[:3], "volynshchik", pile_of(20))
    site.games.append(("volynshchik-pile-20", f"/play/{pile.pk}/"))
    site.public = [
        ("home", "/", None),
        ("leaderboards", "/leaderboard/", None),
        ("leaderboard", "/leaderboard/durak-2p/", None),
        ("bots", "/bots/", None),
        ("bot", "/bots/greedy/", None),
        ("bot-versus", "/bots/greedy/vs/random/", None),
        ("tournaments", "/tournaments/", None),
        ("tournament", f"/tournaments/{demo.tournament.pk}/", None),
        ("tournament-running", f"/tournaments/{demo.running.pk}/", None),
        ("archive", "/matches/", None),
        ("replay", f"/matches/{durak.pk}/?ply=9", TABLE),
        ("replay-volynshchik", f"/matches/{volynshchik.pk}/?ply=12", TABLE),
        ("replay-series", f"/matches/{series.pk}/?ply={series.ply // 2}", TABLE),
        ("spectator-pile-20", f"/matches/{pile.pk}/", TABLE),
        ("verify", f"/matches/{durak.pk}/verify/", None),
        ("replay-open", "/replays/open/", None),
        ("sign-in", "/accounts/login/", None),
        ("sign-up", "/accounts/signup/", None),
    ]
    return site


def sign_in(context, live_server, user) -> None:
    """Give the browser a session of ``user``, as the sign-in form would."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )


def tab_of(browser, live_server, size: str) -> BrowserPage:
    context = browser.new_context(viewport=SIZES[size], locale="en-US")
    context.set_default_timeout(15_000)
    return BrowserPage(context.new_page(), live_server.url)


def open_page(tab: BrowserPage, path: str, ready: str | None) -> None:
    tab.open(path)
    if ready:
        tab.page.wait_for_selector(ready)
    tab.page.evaluate("document.fonts.ready")


def overflow(tab: BrowserPage) -> str | None:
    width = tab.page.evaluate("document.documentElement.scrollWidth")
    inner = tab.page.evaluate("innerWidth")
    return None if width <= inner else f"{width} px wide on a {inner} px screen"


# Every card of a fan (a hand, the pile) that another card overlaps must show its rank
# whole: the next card in its row starts right of the rank's right edge.
HIDDEN_RANKS = """() => {
  const hidden = [];
  for (const fan of document.querySelectorAll('#table .fan, #table .pile')) {
    const cards = Array.from(fan.querySelectorAll(':scope > .card'));
    cards.forEach((card, i) => {
      const next = cards[i + 1];
      const rank = card.querySelector('.corner .rank');
      if (!next || !rank) return;
      const a = rank.getBoundingClientRect(), b = next.getBoundingClientRect();
      if (Math.abs(b.top - card.getBoundingClientRect().top) < 2 && b.left < a.right - 0.5)
        hidden.push(card.dataset.card + ' under ' + (next.dataset.card || 'a card back'));
    });
  }
  return hidden;
}"""

# Cells of data tables past the screen, a tournament's cross table's included (it became a
# card per bot: it scrolled sideways in its panel, hiding whom a score was against).
CELLS_OFF_SCREEN = """() => Array.from(
  document.querySelectorAll('table.data td, table.data tbody th'))
  .filter((td) => { const r = td.getBoundingClientRect();
                    return r.width > 0 && (r.right > innerWidth + 1 || r.left < -1); })
  .map((td) => (td.dataset.label || td.cellIndex) + ': ' + td.textContent.trim().slice(0, 30))"""

# Cards past the screen's edges, and whether the pile's top card is what is drawn there.
CARDS_OFF_SCREEN = """() => Array.from(document.querySelectorAll('#table .card'))
  .filter((c) => { const r = c.getBoundingClientRect();
                   return r.right > innerWidth || r.left < 0; })
  .map((c) => c.dataset.card || 'a card back')"""
PILE_TOP_SHOWN = """() => {
  const top = document.querySelector('#table .pile > .card:last-child');
  if (!top) return null;
  top.scrollIntoView({block: 'center'});
  const r = top.getBoundingClientRect();
  const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return r.left >= 0 && r.right <= innerWidth && top.contains(at);
}"""

BAR_BOXES = """() => {
  const box = (id) => { const r = document.getElementById(id).getBoundingClientRect();
                        return {top: r.top, bottom: r.bottom}; };
  return {bar: box('actions'), hand: box('my-hand'), table: box('table'),
          clock: document.getElementById('clock').textContent,
          prompt: document.getElementById('prompt').textContent, scrolled: scrollY};
}"""

AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}));
}"""


def axe_check(tab: BrowserPage, axe_source: str) -> list[dict]:
    """Run axe-core on the page; return its violations (rule, impact, nodes, targets)."""
    tab.page.evaluate(axe_source)
    return tab.page.evaluate(AXE_RUN)


def look(tab, name, path, ready, size, axe_source, problems, axe_counts) -> None:
    """Open one page; note what is wrong with it; screenshot it; run axe on it."""
    open_page(tab, path, ready)
    if wide := overflow(tab):
        problems.append(f"{name}: {wide}")
    if hidden := tab.page.evaluate(HIDDEN_RANKS):
        problems.append(f"{name}: ranks hidden in a fan: {hidden[:5]}")
    if size == "phone":
        if cells := tab.page.evaluate(CELLS_OFF_SCREEN):
            problems.append(f"{name}: table cells off the screen: {cells[:5]}")
        if cards := tab.page.evaluate(CARDS_OFF_SCREEN):
            problems.append(f"{name}: cards off the screen: {cards[:5]}")
        if tab.page.evaluate(PILE_TOP_SHOWN) is False:
            problems.append(f"{name}: the top of the pile is not in view")
    tab.screenshot(f"layout-{name}-{size}")
    violations = axe_check(tab, axe_source)
    counts: dict[str, int] = {}
    for violation in violations:
        counts[violation["impact"]] = counts.get(violation["impact"], 0) + violation["nodes"]
        if violation["impact"] in ("serious", "critical"):
            problems.append(
                f"{name}: axe {violation['impact']} {violation['id']} ({violation['help']}) "
                f"on {violation['nodes']} element(s): {violation['targets']}"
            )
    axe_counts[name] = {"violations": violations, "nodes_by_impact": counts}


@pytest.mark.parametrize("size", ["phone", "laptop"])
def test_every_page_fits_the_screen_and_passes_axe(browser, live_server, site, size, axe_source):
    problems: list[str] = []
    axe_counts: dict[str, dict] = {}
    visitor = tab_of(browser, live_server, size)
    for name, path, ready in site.public:
        look(visitor, name, path, ready, size, axe_source, problems, axe_counts)
    visitor.page.context.close()

    player = tab_of(browser, live_server, size)
    sign_in(player.page.context, live_server, site.player)
    look(player, "play-lobby", "/play/", None, size, axe_source, problems, axe_counts)
    for name, path in site.games:
        look(player, f"play-{name}", path, PLAYING, size, axe_source, problems, axe_counts)
    player.page.context.close()

    SCREENSHOTS.parent.joinpath(f"axe-{size}.json").write_text(json.dumps(axe_counts, indent=1))
    errors = visitor.errors + player.errors
    assert not errors, "JavaScript errors:\n" + "\n".join(errors)
    assert not problems, f"at {size} size:\n" + "\n".join(problems)


def test_the_action_bar_of_every_game_is_in_view_on_a_laptop(browser, live_server, site):
    """At 1366 x 768, before any scroll: the table's top, the hand and, under it, the
    action bar with its prompt, buttons and clock."""
    player = tab_of(browser, live_server, "laptop")
    sign_in(player.page.context, live_server, site.player)
    problems = []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, path in site.games:
        open_page(player, path, PLAYING)
        box = player.page.evaluate(BAR_BOXES)
        bar, hand = box["bar"], box["hand"]
        if not (box["table"]["top"] >= 0 and bar["bottom"] <= 768 and box["scrolled"] == 0):
            problems.append(f"{name}: the action bar is at {bar['top']:.0f}-{bar['bottom']:.0f} px")
        if hand["bottom"] > bar["top"] + 1:
            problems.append(f"{name}: the hand ends at {hand['bottom']:.0f} px, under the bar")
        if not box["prompt"].strip() or not box["clock"].strip():
            problems.append(f"{name}: the bar has no prompt or no clock: {box}")
        player.page.screenshot(path=str(SCREENSHOTS / f"action-bar-{name}-laptop.png"))
    player.page.context.close()
    assert not player.errors, "JavaScript errors:\n" + "\n".join(player.errors)
    assert not problems, "\n".join(problems)
