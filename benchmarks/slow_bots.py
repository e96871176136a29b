"""A server of slow HTTP bots, in a process of its own: every bot on its own path answers
each move request with its first legal move after a fixed delay (raw HTTP/1.1 with
keep-alive), and counts the calls it holds at once. ``benchmarks.bot_calls`` waits on it.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing

from benchmarks import harness


def serve_bots(port: int, delay: float, in_flight, ready) -> None:
    """Answer every POST with its first legal move after ``delay`` seconds, forever."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = json.loads(await reader.readexactly(length))
                with in_flight.get_lock():
                    in_flight.value += 1
                try:
                    await asyncio.sleep(delay)
                finally:
                    with in_flight.get_lock():
                        in_flight.value -= 1
                if body.get("type") == "ping":
                    answer = b'{"pong": true}'
                else:
                    answer = json.dumps({"move": body["legal_moves"][0]}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
        ready.set()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def bot_server_start(delay: float):
    """Start ``serve_bots`` in a process of its own; return it, its port and its count of
    calls in flight, once it listens."""
    port = harness.free_port()
    in_flight = multiprocessing.Value("i", 0)
    ready = multiprocessing.Event()
    server = multiprocessing.Process(
        target=serve_bots, args=(port, delay, in_flight, ready), daemon=True
    )
    server.start()
    ready.wait(30)
    return server, port, in_flight
