"""A ladder bot that looks for its twin finds nothing while its table is dealt.

The bot is a real HTTP bot on 127.0.0.1. On each of its turns it searches the public API
of a real server (uvicorn) for the other deals of its table, as anonymous and with its
owner's token, and reads each one (detail, replay, verify and their pages), collecting
every card those answers show that its own view does not. A ladder table deals one deck
in each seat rotation, so before the fix the second deal's bot read its hand in the
first deal's replay. On the embedded default (SQLite, tasks in process) and on PostgreSQL
with a Celery worker process (the Redis pass).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid

import httpx
import pytest

from bots.models import Bot
from games.models import DealGroup, Match
from tests.bots.conftest import reply
from tournaments.models import LadderMatch

CARD = re.compile(r"(?<![0-9A-Za-z])[6-9TJQKA][SHDC](?![0-9A-Za-z])")
SEARCHER = "twin-seeker"


class TwinSearch:
    """The HTTP bot's behaviour: search, then play the first legal move."""

    def __init__(self, base_url: str, owner_token: str) -> None:
        self.base_url, self.owner_token = base_url, owner_token
        self.turns: list[dict] = []
        self.lock = threading.Lock()

    def __call__(self, handler, request: dict) -> None:
        body = request["body"]
        if "legal_moves" not in body:
            reply(handler, b'{"pong": true}')
            return
        visible = set(CARD.findall(json.dumps(body.get("view"))))
        seen, twins = self.search(int(body["match_id"]))
        with self.lock:
            self.turns.append(
                {"match": int(body["match_id"]), "twins": twins, "leaked": sorted(seen - visible)}
            )
        reply(handler, json.dumps({"move": body["legal_moves"][0]}).encode())

    def search(self, current: int) -> tuple[set[str], list[int]]:
        """Return the cards read about the bot's other matches, and those matches."""
        seen: set[str] = set()
        twins: list[int] = []
        for headers in ({}, {"Authorization": f"Token {self.owner_token}"}):
            with httpx.Client(base_url=self.base_url, headers=headers, timeout=10) as client:
                listing = client.get("/api/v1/matches/", params={"bot": SEARCHER}).json()
                for match in listing["results"]:
                    if match["id"] == current:
                        continue
                    twins.append(match["id"])
                    for path in (
                        f"/api/v1/matches/{match['id']}/",
                        f"/api/v1/matches/{match['id']}/replay/",
                        f"/api/v1/matches/{match['id']}/verify/",
                        f"/matches/{match['id']}/",
                        f"/matches/{match['id']}/verify/",
                    ):
                        seen |= set(CARD.findall(client.get(path).text))
        return seen, twins


def _ladder_bots(user, url: str) -> tuple[Bot, Bot]:
    from bots import services

    Bot.objects.update(enabled=False)
    searcher = Bot.objects.create(
        name=SEARCHER, owner=user, kind=Bot.Kind.HTTP, url=url, secret="s", games=["durak"]
    )
    greedy = next(bot for bot in services.builtin_bots_ensure() if bot.name == "greedy")
    Bot.objects.filter(pk=greedy.pk).update(enabled=True)
    return searcher, greedy


def _assert_found_nothing_then_everything(search: TwinSearch, first: int) -> None:
    deals = list(LadderMatch.objects.filter(table=first).order_by("rotation"))
    assert len(deals) == 2 and all(d.match.status == Match.Status.FINISHED for d in deals)
    second = deals[1].match_id
    searched = [turn for turn in search.turns if turn["match"] == second]
    assert searched, "the bot had no turn in the second deal"
    assert all(deals[0].match_id in turn["twins"] for turn in searched), "the twin is listed"
    leaks = [turn for turn in search.turns if turn["leaked"]]
    assert not leaks, f"the bot read cards of its live deal: {leaks[:3]}"
    # The same search once the table is over: the group unsealed and every card shows.
    group = DealGroup.objects.get(pk=deals[0].match.deal_group_id)
    assert group.unsealed_at is not None
    seen, _ = search.search(second)
    assert len(seen) >= 30, "the search reads the cards of an unsealed match"


@pytest.mark.django_db(transaction=True)
def test_a_ladder_bot_finds_nothing_of_its_twin_on_the_embedded_default(
    live_server, user, http_bot, celery_eager, settings
):
    from accounts.tokens import token_create
    from tournaments.ladder import ladder_tick

    settings.LADDER_TABLES = [["durak", 2]]
    settings.BOTS_ALLOW_PRIVATE_URLS = True
    search = TwinSearch(live_server.url, token_create(user=user)[1])
    url, _ = http_bot(search)
    _ladder_bots(user, url)

    (first,) = ladder_tick(seed=1)

    _assert_found_nothing_then_everything(search, first)


@pytest.mark.real_services
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
def test_a_ladder_bot_finds_nothing_of_its_twin_with_a_worker_process(
    live_server, user, http_bot, tmp_path, settings
):
    from accounts.tokens import token_create
    from cardserver.celery import settings_override
    from tests.processes import start_solo_worker, worker_database_url
    from tournaments.ladder import ladder_tick

    settings.LADDER_TABLES = [["durak", 2]]
    search = TwinSearch(live_server.url, token_create(user=user)[1])
    url, _ = http_bot(search)
    _ladder_bots(user, url)
    # A queue of its own keeps this worker away from every other message on the broker.
    queue = f"test-twin-{uuid.uuid4().hex}"
    environment = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "DATABASE_URL": worker_database_url(),
        "CARDSERVER_VAR_DIR": str(tmp_path / "var"),
        "BOTS_ALLOW_PRIVATE_URLS": "1",
    }
    worker = start_solo_worker(queue, environment)
    try:
        with settings_override(task_default_queue=queue):
            (first,) = ladder_tick(seed=1)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            deals = LadderMatch.objects.filter(table=first)
            if deals.count() == 2 and not deals.exclude(match__status="finished").exists():
                break
            time.sleep(0.5)
    finally:
        worker.terminate()
        _, errors = worker.communicate(timeout=60)
    assert LadderMatch.objects.filter(table=first).count() == 2, errors[-3000:]
    # The worker settles the group after its last commit; a moment for it to land.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and DealGroup.objects.filter(unsealed_at=None).exists():
        time.sleep(0.2)
    _assert_found_nothing_then_everything(search, first)
