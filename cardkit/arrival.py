"""When a bot's answer reached this machine: the kernel's arrival stamps on a socket.

The bot caller's event loop may read an answer later than it came (the loop waits for the
GIL behind the pool's recording threads, and libuv runs a due timer before it reads the
sockets). The bot's time ends when its answer arrived, so the call's timer reads what
waits in the socket itself, with the time Linux stamped on its segments (SO_TIMESTAMPNS),
before it judges the call late.

Pure Python, no Django, like the caller.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass

# Linux's SO_TIMESTAMPNS (also its control message's type), which the socket module lacks.
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_TIMESPEC = struct.Struct("@qq")


def stamps_enable(sock) -> bool:
    """Have the kernel stamp the segments that arrive on ``sock`` (a socket or asyncio's
    stand-in for one); return whether it will."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    except (OSError, AttributeError):
        return False
    return True


@dataclass(slots=True)
class Unread:
    """The bytes that waited unread in a socket, whether the peer had closed it after
    them, and when the last of them arrived (time.monotonic(); None with no stamp)."""

    data: bytes
    ended: bool
    arrived: float | None


def unread_take(fileno: int, limit: int) -> Unread | None:
    """Read, without blocking, up to about ``limit`` bytes waiting in the socket ``fileno``
    (which stays open, its owner's); None when nothing waits or it cannot be read."""
    chunks: list[bytes] = []
    ended = False
    stamp = None
    sock = socket.socket(fileno=fileno)
    try:
        while limit > 0:
            data, ancillary, _flags, _address = sock.recvmsg(65536, 64, socket.MSG_DONTWAIT)
            if not data:
                ended = True
                break
            chunks.append(data)
            limit -= len(data)
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
                    seconds, nanoseconds = _TIMESPEC.unpack(value[: _TIMESPEC.size])
                    stamp = seconds + nanoseconds / 1e9
    except (BlockingIOError, InterruptedError):
        pass
    except OSError:
        return None
    finally:
        sock.detach()
    if not chunks and not ended:
        return None
    if not chunks:
        # The end alone carries no stamp: it came at the latest now.
        return Unread(b"", True, time.monotonic())
    arrived = None if stamp is None else time.monotonic() - (time.time() - stamp)
    return Unread(b"".join(chunks), ended, arrived)
