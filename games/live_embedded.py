"""The embedded hub's wake-ups between processes (no Redis): a Unix socket per web process.

Without Redis (SQLite, the embedded broker, ``make run``) the processes of an arena share
one machine. Each web process's hub listens on a Unix stream socket of its own in the
arena's folder (``rendezvous()``: one per database, as Redis channels are named after
it), and the process that committed a change of a match (a web process, a Celery worker
playing a bot's move or a forfeit on the clock) sends the change's message, with its
keys, to every socket there: the same messages, on the same keys, as the Redis hub is
sent, and at once. Nothing runs while no match changes, and a process with no stream
open costs a publisher nothing but a look at the folder.

A publisher keeps one connection to each hub and writes one JSON line per change; the
hub reads the lines in its event loop (``Inbox``) and wakes the waiters of their keys.
A hub's socket is bound before its first waiter registers, so a change committed after
a waiter's first read finds it there: no wake-up is lost. A socket left by a process that
was killed refuses connections, and the first publisher to meet it removes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import logging
import os
import socket
import tempfile
import threading
from pathlib import Path
from typing import Protocol

import orjson


class Hub(Protocol):
    """What the inbox needs of ``games.live.Hub``: its loop, and delivery to a key's waiters.

    A protocol, not an import: ``games.live`` builds on this module, never the reverse.
    """

    loop: asyncio.AbstractEventLoop

    def deliver(self, key: str, message: dict | None) -> None: ...

logger = logging.getLogger(__name__)

SUFFIX = ".hub"
# Seconds a publisher waits for a hub to take a line (its loop stalled, its buffer full)
# before it drops the connection and the message, as a Redis publish times out.
SEND_TIMEOUT = 1.0

_numbers = itertools.count(1)


@functools.cache
def rendezvous(channel_prefix: str) -> Path:
    """Return the folder of the hubs of the arena whose channels are named ``channel_prefix``.

    In the temporary folder, short enough for a socket's path (about 100 bytes at most),
    named by a digest of the database and of the user running the processes.
    """
    uid = os.getuid() if hasattr(os, "getuid") else 0
    digest = hashlib.sha256(f"{uid}:{channel_prefix}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"cardarena-{digest}"


class _Lines(asyncio.Protocol):
    """One publisher's connection: JSON lines ``[keys, message]``, delivered to the hub."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        for line in lines:
            try:
                keys, message = orjson.loads(line)
            except (orjson.JSONDecodeError, ValueError, TypeError):
                logger.warning("live: unreadable message on the hub's socket: %r", line[:200])
                continue
            for key in keys:
                self.hub.deliver(key, message)


class Inbox:
    """A hub's socket in the arena's folder, and the server that reads what comes to it."""

    def __init__(self, hub: Hub, folder: Path) -> None:
        self.path = folder / f"{os.getpid()}-{next(_numbers)}{SUFFIX}"
        # Bound and listening now, before any waiter registers: a publisher's connection
        # waits in the backlog, and its lines in the socket's buffer, until the server
        # below takes them.
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        for attempt in range(2):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if hasattr(os, "getuid") and folder.stat().st_uid != os.getuid():
                # In a shared temporary folder: another user's could send forged wake-ups.
                raise PermissionError(f"{folder} belongs to another user")
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a killed process of the same pid left it
            try:
                self.socket.bind(str(self.path))
                break
            except FileNotFoundError:  # the last hub to leave removed the folder meanwhile
                if attempt:
                    raise
        self.socket.listen(128)
        self.socket.setblocking(False)
        self._loop = hub.loop
        self._server: asyncio.AbstractServer | None = None
        self._closed = False
        self._task = hub.loop.create_task(self._serve(hub))

    async def _serve(self, hub: Hub) -> None:
        self._server = await hub.loop.create_unix_server(lambda: _Lines(hub), sock=self.socket)

    def close(self) -> None:
        """Leave the folder (no publisher connects any more) and close the socket."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        with contextlib.suppress(OSError):  # the last to leave removes the folder
            self.path.parent.rmdir()
        if self._loop.is_closed():  # its server went with the loop: only the socket is left
            self.socket.close()
            return
        self._task.cancel()
        if self._server is not None:
            self._server.close()
        else:
            self.socket.close()


# --- Publishing, in the process that committed ------------------------------------------

_connections: dict[str, socket.socket] = {}
_lock = threading.Lock()


def _forget_connections() -> None:
    """A forked child (a Celery pool process) makes connections of its own."""
    global _lock
    _connections.clear()
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_connections)


def publish(folder: Path, keys: list[str], message: dict, *, own: str | None = None) -> None:
    """Send ``message`` for ``keys`` to every hub in ``folder`` but ``own`` (this
    process's hub, which the caller wakes itself)."""
    try:
        hubs = {entry.path for entry in os.scandir(folder) if entry.name.endswith(SUFFIX)}
    except FileNotFoundError:
        hubs = set()
    hubs.discard(own)
    line = orjson.dumps([keys, message]) + b"\n"
    with _lock:
        for path in set(_connections) - hubs:  # hubs that left
            _connections.pop(path).close()
        for path in hubs:
            _send(path, line)


def _send(path: str, line: bytes) -> None:
    """Write ``line`` to the hub at ``path``; on a connection that broke, once more on a
    new one (a hub that died refuses it)."""
    for _ in range(2):
        connection = _connections.get(path) or _connect(path)
        if connection is None:
            return
        try:
            connection.sendall(line)
            return
        except (BrokenPipeError, ConnectionResetError):
            _connections.pop(path, None)
            connection.close()
        except OSError as exc:  # its loop is stalled past SEND_TIMEOUT
            _connections.pop(path, None)
            connection.close()
            logger.warning("live: a message to the hub at %s was lost (%s)", path, exc)
            return


def _connect(path: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(SEND_TIMEOUT)
    try:
        connection.connect(path)
    except ConnectionRefusedError:
        connection.close()
        # No one listens there: its process died without leaving.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return None
    except OSError as exc:
        connection.close()
        if not isinstance(exc, FileNotFoundError):  # FileNotFoundError: it left meanwhile
            logger.warning("live: cannot reach the hub at %s (%s)", path, exc)
        return None
    _connections[path] = connection
    return connection
