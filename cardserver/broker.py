"""The embedded broker: kombu's filesystem transport, made safe to run for days.

kombu's own filesystem transport creates a message file under its final name and then
writes it, so a consumer listing the folder meanwhile can take an empty or half-written
file (kombu issue #1551); the JSON error then escapes the worker's consumer, which stops
with "Unrecoverable error". Here a message is written under a name no consumer looks at
and renamed into place (a rename within a folder is atomic: a consumer sees the whole
file or none), a consumer claims a message by renaming it within the folder (two
consumers cannot both win), and a message that still cannot be read (a file put there
by hand, a disk error) is logged and dropped: no single message ends a worker.

A claimed message stays on disk, named with the claiming process's id, until it is
acknowledged (kombu's own transport deletes it when read, so a task acknowledged late
was lost with a worker that died): a consumer that finds a claim whose process is gone
puts the message back in its queue, as a broker server redelivers an unacknowledged
message whose connection closed. That is the embedded default's ``acks_late``.

A worker's wait for messages also ends as soon as it may take none (``Transport``): with
this transport Celery runs its blocking loop, which acknowledges the tasks that finished
only between two waits of up to 2 s; a worker whose prefetch was used up by tasks already
done took no message until that wait ran out, so it took at most ``prefetch_count``
messages every 2 s, and each hop of a bot turn queued behind it (docs/recovery.md).

Settings select it with ``CELERY_BROKER_TRANSPORT`` when the broker URL is
``filesystem://``; the options (folders, polling interval) are the stock transport's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from queue import Empty
from time import monotonic, sleep

from kombu.exceptions import ChannelError
from kombu.transport import filesystem, virtual
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

# Suffixes of files that are not (yet, or any more) a queued message.
_WRITING = ".writing"
_CLAIMED = ".claimed"


# Seconds between a consumer's looks for messages claimed by processes that are gone.
RESTORE_EVERY = 2.0


class Channel(filesystem.Channel):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Claimed files of the messages delivered here and not yet acknowledged, by tag.
        self._claimed: dict[str, str] = {}
        self._restored_at = 0.0
        # Queues read without acknowledgements (the workers' remote control): their
        # messages are settled when read.
        self._no_ack_queues: set[str] = set()

    def basic_consume(self, queue, no_ack, callback, consumer_tag, **kwargs):
        if no_ack:
            self._no_ack_queues.add(queue)
        return super().basic_consume(queue, no_ack, callback, consumer_tag, **kwargs)

    def basic_get(self, queue, no_ack=False, **kwargs):
        message = super().basic_get(queue, no_ack=no_ack, **kwargs)
        if message is not None and no_ack:
            self._settled(message.delivery_tag)
        return message

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
        """Claim, read and return the oldest message of ``queue``; drop unreadable ones.
        The claimed file stays until the message is acknowledged."""
        suffix = f".{queue}.msg"
        folder = self.data_folder_in
        if monotonic() - self._restored_at > RESTORE_EVERY:
            self._restored_at = monotonic()
            restore_dead_claims(folder)
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
                _remove(claimed)
                raise ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
            try:
                payload = loads(raw.decode())
                # What kombu's virtual transport reads of every message it delivers.
                self.Message(payload, channel=self)
                if queue in self._no_ack_queues:
                    _remove(claimed)
                else:
                    self._claimed[payload["properties"]["delivery_tag"]] = claimed
            except Exception as exc:  # noqa: BLE001 - any unreadable message is dropped
                _remove(claimed)
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


    def basic_ack(self, delivery_tag, multiple=False) -> None:
        super().basic_ack(delivery_tag, multiple=multiple)
        self._settled(delivery_tag)

    def basic_reject(self, delivery_tag, requeue=False) -> None:
        # Requeued, the message is written to the queue again (kombu's _restore, below).
        super().basic_reject(delivery_tag, requeue=requeue)
        self._settled(delivery_tag)

    def _restore(self, message) -> None:
        super()._restore(message)
        self._settled(message.delivery_tag)

    def _settled(self, delivery_tag) -> None:
        """Forget the claimed file of a message acknowledged, rejected or put back."""
        claimed = self._claimed.pop(delivery_tag, None)
        if claimed is not None:
            _remove(claimed)


def restore_dead_claims(folder: str) -> list[str]:
    """Put back in their queues the messages in ``folder`` claimed by processes that are
    gone (their worker died before acknowledging them); return their names."""
    restored = []
    for name in os.listdir(folder):
        if not name.endswith(_CLAIMED):
            continue
        original, _, pid = name[: -len(_CLAIMED)].rpartition(".")
        if not pid.isdigit() or _process_alive(int(pid)):
            continue
        try:
            os.rename(os.path.join(folder, name), os.path.join(folder, original))
        except OSError:
            continue  # another consumer put it back first
        log.warning("broker: put back %s, claimed by process %s that is gone", original, pid)
        restored.append(original)
    return restored


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


class Transport(filesystem.Transport):
    Channel = Channel
    # Not the stock transport's state: queues and exchanges declared through this one.
    global_state = virtual.BrokerState()

    def drain_events(self, connection, timeout=None) -> None:
        """Deliver one message, polling every ``polling_interval`` seconds until
        ``timeout``; raise TimeoutError (socket.timeout) at once, after one interval,
        when a consumer's prefetch is used up.

        Celery's loop for this transport (``celery.worker.loops.synloop``) sends the
        acknowledgements of finished tasks between two calls of this method, each waiting
        up to 2 s. While the worker's prefetch is held by tasks that finished but are not
        yet acknowledged, kombu's own method can deliver it nothing and waits out those
        2 s; returning lets the loop acknowledge them, and the next call delivers.
        """
        started = monotonic()
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                pass
            if timeout is not None and monotonic() - started >= timeout:
                raise TimeoutError()
            sleep(self.polling_interval or 0)
            if self._prefetch_used_up():
                raise TimeoutError()

    def _prefetch_used_up(self) -> bool:
        """Whether a consuming channel has used up its prefetch (the worker's task channel;
        its remote-control channel has no prefetch limit)."""
        return any(
            channel._consumers and channel.qos.prefetch_count and not channel.qos.can_consume()
            for channel in self.channels
        )
