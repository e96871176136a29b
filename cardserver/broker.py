"""The embedded broker: kombu's filesystem transport, made safe to run for days.

kombu's own filesystem transport creates a message file under its final name and then
writes it, so a consumer listing the folder meanwhile can take an empty or half-written
file (kombu issue #1551); the JSON error then escapes the worker's consumer, which stops
with "Unrecoverable error". Here a message is written under a name no consumer looks at
and renamed into place (a rename within a folder is atomic: a consumer sees the whole
file or none), a consumer claims a message by renaming it within the folder (two
consumers cannot both win), and a message that still cannot be read (a file put there
by hand, a disk error) is logged and dropped: no single message ends a worker.

Settings select it with ``CELERY_BROKER_TRANSPORT`` when the broker URL is
``filesystem://``; the options (folders, polling interval) are the stock transport's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from queue import Empty
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem, virtual
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

# Suffixes of files that are not (yet, or any more) a queued message.
_WRITING = ".writing"
_CLAIMED = ".claimed"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs) -> None:
        """Put ``payload`` on ``queue`` as one file that appears whole or not at all."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        path = os.path.join(self.data_folder_out, name)
        partial = path + _WRITING
        try:
            with open(partial, "wb") as file:
                file.write(dumps(payload).encode())
            os.replace(partial, path)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {path!r} to directory") from exc

    def _get(self, queue):
        """Claim, read and return the oldest message of ``queue``; drop unreadable ones."""
        suffix = f".{queue}.msg"
        folder = self.data_folder_in
        for name in sorted(os.listdir(folder)):
            if not name.endswith(suffix):
                continue
            path = os.path.join(folder, name)
            claimed = f"{path}.{os.getpid()}{_CLAIMED}"
            try:
                os.rename(path, claimed)
            except OSError:
                continue  # another consumer took it first
            try:
                with open(claimed, "rb") as file:
                    raw = file.read()
            except OSError as exc:
                raise ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
            finally:
                _remove(claimed)
            try:
                payload = loads(raw.decode())
                # What kombu's virtual transport reads of every message it delivers.
                self.Message(payload, channel=self)
            except Exception as exc:  # noqa: BLE001 - any unreadable message is dropped
                log.error(
                    "broker: dropped unreadable message %s of queue %s (%d bytes, %s: %s)",
                    name,
                    queue,
                    len(raw),
                    type(exc).__name__,
                    exc,
                )
                continue
            return payload
        raise Empty()


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


class Transport(filesystem.Transport):
    Channel = Channel
    # Not the stock transport's state: queues and exchanges declared through this one.
    global_state = virtual.BrokerState()
