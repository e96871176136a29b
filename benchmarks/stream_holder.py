"""Thousands of idle streams for ``benchmarks.live``, held from an asyncio client.

``StreamHolder`` opens them from an event loop in a thread of the calling process;
``HolderProcess`` runs that holder in a process of its own and talks to it through a
pipe. The benchmark uses the process: real waiting clients are other programs on other
machines, and a holder in the benchmark's own process shares its interpreter lock and its
garbage collector with the 16 player threads and the probe whose speed is measured (a
full collection walking 10,000 streams' objects stops the players, not the server). With
a process of its own, the holder's CPU is reported apart, as any other client's.

Streams are raw sockets (HTTP/1.1 requests written by hand): a holder costs a coroutine
and a socket per stream, which an HTTP library would multiply.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time

from benchmarks.machine import own_cpu


class StreamHolder:
    """Open streams from one asyncio loop in a thread of its own; note their events."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tasks: list[asyncio.Task] = []
        self.opened = 0
        self.failed = 0
        # (match id, ply) -> arrival times, one per stream of the match.
        self.arrivals: dict[tuple[int, int], list[float]] = {}

    def run(self, coroutine, timeout: float = 3600):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _stream(self, path: str, token: str | None, match_id: int | None,
                      opened: asyncio.Semaphore) -> None:  # fmt: skip
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            self.failed += 1
            opened.release()
            return
        auth = f"Authorization: Token {token}\r\n" if token else ""
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
            f"{auth}\r\n".encode()
        )
        answered = False
        try:
            status = await reader.readline()
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            if b" 200 " not in status:
                self.failed += 1
                return
            self.opened += 1
            answered = True
            opened.release()
            seen: set[int] = set()
            while True:
                line = await reader.readline()
                if not line:
                    return
                if match_id is not None and line.startswith(b"id: "):
                    ply = int(line[4:])
                    if ply not in seen:
                        seen.add(ply)
                        self.arrivals.setdefault((match_id, ply), []).append(time.monotonic())
        except (OSError, asyncio.IncompleteReadError, ValueError):
            self.failed += 1
        except asyncio.CancelledError:
            pass
        finally:
            if not answered:  # refused or cut before its answer: the next may open
                opened.release()
            writer.close()

    async def _open(self, specs: list[tuple[str, str | None, int | None]], parallel: int) -> None:
        gate = asyncio.Semaphore(parallel)
        for path, token, match_id in specs:
            await gate.acquire()
            self.tasks.append(asyncio.create_task(self._stream(path, token, match_id, gate)))
        for _ in range(parallel):  # every open answered (or failed)
            await gate.acquire()

    def open(self, specs: list[tuple[str, str | None, int | None]], parallel: int = 200) -> None:
        self.run(self._open(specs, parallel))

    def counts(self) -> tuple[int, int]:
        """Return (streams open, streams that failed)."""
        return self.opened, self.failed

    def take_arrivals(self) -> dict[tuple[int, int], list[float]]:
        return dict(self.arrivals)

    def cpu(self) -> float | None:
        """The holder's own CPU seconds so far: None, it is part of its process's."""
        return None

    async def _close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()
        self.opened = 0

    def close(self) -> None:
        self.run(self._close())
        self.arrivals.clear()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


def _serve(connection, port: int) -> None:
    """The holder process: run each command that comes through ``connection``."""
    holder = StreamHolder(port)
    while True:
        command, *args = connection.recv()
        if command == "stop":
            holder.stop()
            connection.send(None)
            return
        if command == "open":
            connection.send(holder.open(*args))
        elif command == "close":
            connection.send(holder.close())
        elif command == "counts":
            connection.send(holder.counts())
        elif command == "arrivals":
            connection.send(holder.take_arrivals())
        else:  # "cpu"
            connection.send(own_cpu())


class HolderProcess:
    """A ``StreamHolder`` in a process of its own (spawned: nothing of this one's copied)."""

    def __init__(self, port: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, port), daemon=True)
        self.process.start()

    def _ask(self, *command):
        self._connection.send(command)
        return self._connection.recv()

    def open(self, specs: list[tuple[str, str | None, int | None]], parallel: int = 200) -> None:
        self._ask("open", specs, parallel)

    def counts(self) -> tuple[int, int]:
        return self._ask("counts")

    def take_arrivals(self) -> dict[tuple[int, int], list[float]]:
        # time.monotonic() is the machine's clock (CLOCK_MONOTONIC): the same in both.
        return self._ask("arrivals")

    def cpu(self) -> float:
        return self._ask("cpu")

    def close(self) -> None:
        self._ask("close")

    def stop(self) -> None:
        self._ask("stop")
        self.process.join(timeout=30)
