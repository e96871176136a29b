"""Fixtures of the page tests: a small arena, and a headless Chromium for browser tests.

The browser tests drive Debian's Chromium (``/usr/bin/chromium``) with Playwright; no
browser is downloaded. Without Chromium or Playwright they are skipped with a message
saying how to install them (``.ci/run`` installs both, so they always run in CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artefacts" / "screenshots"
HERE = Path(__file__).resolve().parent
# axe-core, the accessibility checker injected into pages, pinned in tests/web/package.json.
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
INSTALL_HINT = (
    "browser tests need Debian's Chromium and Playwright for Python: "
    "`apt-get install -y chromium` and `pip install playwright` (no `playwright install`); "
    "`bash .ci/run` installs both"
)


@pytest.fixture(scope="module")
def shared_demo(django_db_setup, django_db_blocker):
    """A small arena made once per test module, inside a transaction rolled back after it.

    Five bots, rated 2-player Durak matches with a fit, a Volynshchik match, a forfeit, a
    finished tournament and a running one. Each test that uses it (through ``demo``) runs
    in a savepoint of that transaction, so its own writes are undone after it as usual.
    """
    from django.db import transaction

    from cardserver.celery import eager_tasks
    from web.demo import demo_arena

    with django_db_blocker.unblock(), transaction.atomic():
        with eager_tasks():
            made = demo_arena(rated_matches=4, fit_bootstraps=10)
        yield made
        transaction.set_rollback(True)


@pytest.fixture
def demo(shared_demo, db):
    """The module's small arena (see ``shared_demo``), for a test with database access."""
    return shared_demo


@pytest.fixture
def live_demo(transactional_db, celery_eager):
    """A small arena for a browser test, committed so that the live server sees it."""
    from web.demo import demo_arena

    return demo_arena(rated_matches=3, fit_bootstraps=10, volynshchik=False, tournament=False)


# --- Browser ----------------------------------------------------------------------------


def _missing(reason: str):
    """Skip a browser test, or fail it where browser tests must run (``.ci/run``)."""
    if os.environ.get("CARDSERVER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}: {INSTALL_HINT}")
    pytest.skip(f"{reason}: {INSTALL_HINT}")


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium shared by the browser tests of a module.

    Module-scoped, not session-scoped: while Playwright runs, Django's async-safety check
    is switched off in this process (below), and that must not outlive the browser tests
    (a subprocess started by a later test would inherit it).
    """
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright is not installed")
    # Playwright's synchronous API runs an event loop in this thread, so Django would take
    # every ORM call of the test for one made from async code and refuse it.
    saved = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            )
            yield chromium
            chromium.close()
    finally:
        if saved is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = saved


class BrowserPage:
    """A browser tab on the live server that records console errors and takes screenshots."""

    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.errors: list[str] = []
        # Console errors a test expects (a refusal it provokes), by a part of their text.
        self.expected_errors: list[str] = []
        page.on("console", lambda message: self._console(message))
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def _console(self, message) -> None:
        if message.type == "error" and not any(
            part in message.text for part in self.expected_errors
        ):
            self.errors.append(f"console error: {message.text} ({message.location.get('url')})")

    def open(self, path: str):
        response = self.page.goto(self.base_url + path)
        assert response is not None and response.ok, (
            f"{path} answered {response and response.status}"
        )
        return response

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        # A full-page shot of a scrolled page draws the sticky top bar where it sits now.
        self.page.evaluate("window.scrollTo(0, 0)")
        self.page.screenshot(path=str(path), full_page=True)
        return path


def _browser_page(browser, live_server, viewport: dict):
    context = browser.new_context(viewport=viewport, locale="en-US")
    context.set_default_timeout(15_000)
    tab = BrowserPage(context.new_page(), live_server.url)
    yield tab
    context.close()
    assert not tab.errors, "JavaScript errors:\n" + "\n".join(tab.errors)


@pytest.fixture
def page(browser, live_server, celery_eager):
    """A desktop-sized tab; the test fails if the page logged any JavaScript error."""
    yield from _browser_page(browser, live_server, {"width": 1280, "height": 900})


@pytest.fixture
def phone(browser, live_server, celery_eager):
    """A phone-sized tab (390 x 844 CSS pixels)."""
    yield from _browser_page(browser, live_server, {"width": 390, "height": 844})


@pytest.fixture(scope="session")
def axe_source() -> str:
    """The source of axe-core, installed from tests/web/package-lock.json on first use."""
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            _missing("npm is missing (axe-core is installed with `npm ci --prefix tests/web`)")
        subprocess.run(
            [npm, "ci", "--prefix", str(HERE), "--no-audit", "--no-fund", "--loglevel=error"],
            check=True,
            timeout=300,
        )
    return AXE.read_text(encoding="utf-8")
