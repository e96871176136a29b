"""The spectators' shared batches (``games.streams``): what a web process keeps of them.

Every spectator woken by a change reads one batch, kept for the others by (match, since,
ply, status). A process following thousands of matches keeps thousands of them, so what
one costs in memory is what the process grows by.
"""

from __future__ import annotations

import sys

import httpx
import pytest

from games import streams
from tests.live.server import LiveServer, open_stream
from tests.matches import play_random_moves, start_match

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server():
    with LiveServer() as running:
        yield running


def deep_size(value, seen: set[int] | None = None) -> int:
    """Return the bytes of ``value`` and of every container, string and number in it."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, list | tuple | set):
        size += sum(deep_size(item, seen) for item in value)
    return size


def follow_to_the_end(server: LiveServer, match_ids: list[int]) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for match_id in match_ids:
            with open_stream(client, f"/api/v1/matches/{match_id}/stream/") as reader:
                events = reader.until("end")
            assert [event["event"] for event in events] == ["state", "end"]
            assert events[0]["data"]["status"] == "finished"
            assert events[0]["data"]["view"]["hand_sizes"]


def test_spectators_batches_are_kept_as_their_json_within_a_byte_bound(
    server, user_factory, monkeypatch
):
    users = [user_factory(username=f"p{i}") for i in range(2)]
    finished = []
    for seed in range(10):
        match = play_random_moves(start_match(users), 2000, seed=seed)
        assert match.status == "finished"
        finished.append(match.pk)
    follow_to_the_end(server, finished[:6])
    held = deep_size(list(streams._public_batches.items()))
    # About 4 KB of JSON a finished match, and what holds it: the views' own objects (a
    # revealed durak deal with its history) took 36 KB a match.
    assert held < 6 * 8_000, held
    entries, counted = streams.public_batches_size()
    assert entries == 6
    assert held <= counted, (held, counted)

    # Past the byte bound the oldest batches go, however few entries there are.
    bound = 2 * counted // entries + counted // entries // 2
    monkeypatch.setattr(streams, "_PUBLIC_MAX_BYTES", bound)
    follow_to_the_end(server, finished[6:])
    entries, counted = streams.public_batches_size()
    assert entries == 2 and counted <= bound
    assert [key[0] for key in streams._public_batches] == finished[-2:]
