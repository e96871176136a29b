"""The embedded hub's sockets (``games.live_embedded``): where hubs listen, what a
publisher sends them, and what it does with a socket no process holds any more."""

from __future__ import annotations

import asyncio
import socket

from games import live, live_embedded


async def _published(keys: list[str], message: dict) -> tuple[list, bool, bool]:
    """Start an embedded hub with a waiter on each of ``keys``; publish ``message`` on the
    first key from a thread, as another process would; return what the waiters got,
    whether the hub's socket was in its folder while it ran, and whether it is gone once
    the hub is closed."""
    hub = live.Hub(asyncio.get_running_loop())
    waiters = [hub.waiter([key]) for key in keys]
    folder, path = hub.inbox.path.parent, hub.inbox.path
    listening = path.exists()
    await asyncio.to_thread(live_embedded.publish, folder, keys[:1], message)
    got = await asyncio.wait_for(waiters[0].wait(5), 5)
    others = [waiter.take() for waiter in waiters[1:]]
    hub.close()
    # The folder goes with the last hub (another of this process's, a live server's, may
    # still be there).
    left = not path.exists() and (not folder.exists() or any(folder.iterdir()))
    return [got, waiters[0].take(), *others], listening, left


def test_a_message_another_process_publishes_wakes_the_waiters_of_its_key_only(settings):
    settings.LIVE_PUBSUB_URL = ""
    message = {"match": 7, "change": "moved", "ply": 3, "status": "active", "to_move": 1}
    (got, messages, other), listening, left = asyncio.run(
        _published([live.match_key(7), live.account_key(2)], message)
    )
    assert listening and got is True
    assert messages == [message] and other == []
    assert left  # its socket, and the folder with the last hub


def test_a_socket_whose_process_died_is_removed_by_the_first_publisher(tmp_path):
    folder = tmp_path / "hubs"
    folder.mkdir()
    dead = folder / f"999999-1{live_embedded.SUFFIX}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(dead))  # bound, never listening, then closed: as a killed process
    live_embedded.publish(folder, [live.match_key(1)], {"match": 1})
    assert not dead.exists()


def test_publishing_with_no_hub_anywhere_does_nothing(tmp_path):
    live_embedded.publish(tmp_path / "none", [live.match_key(1)], {"match": 1})
    assert not (tmp_path / "none").exists()


def test_the_folder_is_one_per_database_and_short_enough_for_a_socket():
    here = live_embedded.rendezvous("arena:live:/var/a/db.sqlite3:")
    assert here == live_embedded.rendezvous("arena:live:/var/a/db.sqlite3:")
    assert here != live_embedded.rendezvous("arena:live:/var/b/db.sqlite3:")
    assert len(str(here / f"{2**22}-999{live_embedded.SUFFIX}")) < 104  # macOS's limit
