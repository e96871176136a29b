"""Live streams and the long-poll: coroutines on the server's event loop, woken by the live hub.

- ``GET /api/v1/matches/{id}/stream/``: a match as it happens, for a seat (its own view,
  and its legal moves on its turn) or a spectator (the public view).
- ``GET /api/v1/stream/events/``: one stream per account for everything that concerns it.
- ``GET /api/v1/matches/{id}/wait/``: the long-poll, its contract unchanged, woken the
  same way (``games.player_views.run_wait``).

Server-Sent Events by default (``text/event-stream``; a match stream's ``id:`` is the ply,
so ``Last-Event-ID`` resumes), NDJSON with ``Accept: application/x-ndjson``. A request is
opened by a DRF view (authentication, rate limits, validation, the error body), run off
the event loop; then the coroutine below waits on the hub (``games.live``), which costs
no thread, and reads the match (in the reader pool) only when it has changed. Hidden cards
stay hidden exactly as in ``me/``: every view shown is ``me/``'s own, for the seat the
requester holds, and a move is what the public replay shows.

Streams need the ASGI server (``cardserver.asgi``). Served otherwise (a WSGI server,
Django's test client), a stream answers what there is now and ends, which a browser's
``EventSource`` turns into a poll once a second.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial

import orjson
from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from cardserver.middleware import RequestCyclesMiddleware
from cardserver.serving import HOLD, EventStream, HeldResponse, in_async_server
from games import account_notices, live
from games.models import Match, Move
from games.reading import match_reading
from games.rows import match_progress, match_row
from games.seats_held import seats_of
from games.stream_caps import UNCOUNTED, Lease, Uncounted, capped, stream_lease
from games.view_helpers import my_seat, player_view

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"
# Milliseconds a browser's EventSource waits before it reconnects.
SSE_RETRY_MS = 1000
TERMINAL = (Match.Status.FINISHED, Match.Status.ABORTED)


@dataclass
class StreamPlan:
    """What the DRF view that opened a stream or a wait found: who asks, for what."""

    match_id: int | None
    user: object
    mine: list[int]
    requested: int | None = None
    media_type: str = SSE
    after_ply: int | None = None
    timeout: float = 0.0
    first_status: str = ""
    ip: str = ""
    extra: dict = field(default_factory=dict)


def live_view(view_class: type, run: Callable[[StreamPlan], Awaitable[HttpResponse]]) -> Callable:
    """Return the view of a route: ``view_class`` (a DRF view) opens, ``run`` waits.

    The DRF view validates and authenticates, as any API request, and leaves a
    ``StreamPlan`` on the request (``request.live_plan``) when it may go on; anything else
    it answers (an error) is the answer. Asked by the ASGI server (``serving.HOLD``), the
    view answers a ``HeldResponse``: ``run(plan)`` then waits on the server's event loop,
    keeping nothing of the request. Served otherwise (a WSGI server, Django's test
    client), ``run`` answers at once. drf-spectacular documents ``view_class``.
    """
    opener = view_class.as_view()

    def view(request: HttpRequest, **kwargs) -> HttpResponse:
        response = opener(request, **kwargs)
        plan = getattr(request, "live_plan", None)
        if plan is None:
            return response
        RequestCyclesMiddleware.release(response)  # its view's cycles: the view is done
        if request.META.get(HOLD):
            return HeldResponse(partial(run, plan))
        return async_to_sync(run)(plan)

    view.cls = view_class
    view.initkwargs = {}
    view.csrf_exempt = True
    view.__name__ = view_class.__name__
    return view


def media_type_of(request) -> str:
    accept = request.META.get("HTTP_ACCEPT", "")
    return NDJSON if NDJSON in accept else SSE


# --- Encoding ---------------------------------------------------------------------------


def encode(media_type: str, event: str, body: bytes, event_id: int | None = None) -> bytes:
    """Frame one event whose payload is ``body`` (its JSON) for ``media_type``."""
    if media_type == NDJSON:
        line = {"event": event, "data": None}
        if event_id is not None:
            line["id"] = event_id
        return orjson.dumps(line).replace(b'"data":null', b'"data":' + body, 1) + b"\n"
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: ".encode() + body + b"\n\n"


def keep_alive(media_type: str) -> bytes:
    return b"\n" if media_type == NDJSON else b": keep-alive\n\n"


def stream_response(media_type: str, events: AsyncIterator[bytes]) -> EventStream:
    response = EventStream(events, content_type=media_type)
    response["Cache-Control"] = "no-cache"
    # Proxies (nginx) must pass each event on at once, not buffer the response.
    response["X-Accel-Buffering"] = "no"
    return response


def reconnect(media_type: str) -> bytes:
    return encode(media_type, "reconnect", orjson.dumps({"reason": "server stopping; reconnect"}))


# --- The match stream -------------------------------------------------------------------

# The spectators' batches read last, by (match, since, ply, status), the oldest out
# first: a change wakes every spectator of the match at once, and they share one read.
# A batch is kept as the JSON it is sent as, never as the views' objects: a finished
# durak match's public view with its history took 36 KB of Python objects (some 450 of
# them, each walked by every full collection of the garbage collector) for 4 KB of JSON,
# so 2,048 batches held 74 MB in each web process. Bounded in entries and in bytes.
_public_batches: OrderedDict[tuple, tuple[list, tuple, bool]] = OrderedDict()
_public_lock = threading.Lock()
_public_bytes = 0
_PUBLIC_MAX = 2048
_PUBLIC_MAX_BYTES = 16 * 2**20
# What a kept batch costs beside its JSON: the tuples and the key (measured, rounded up).
_BATCH_OVERHEAD = 500
_EVENT_OVERHEAD = 150


def forget_public_batches() -> None:
    global _public_bytes
    with _public_lock:
        _public_batches.clear()
        _public_bytes = 0


def public_batches_size() -> tuple[int, int]:
    """Return how many spectators' batches this process keeps, and their bytes."""
    with _public_lock:
        return len(_public_batches), _public_bytes


def _compact(found: tuple[list, tuple, bool]) -> tuple[list, tuple, bool]:
    """Return ``found`` with each event's JSON in bytes of its own size, fit to be kept.

    orjson's bytes keep the whole buffer it wrote them in: at least 4 KB, and 16 KB for a
    view of 6 KB. Only a kept batch pays for the copy.
    """
    events, now, ended = found
    return [(name, id_, bytes(memoryview(body))) for name, id_, body in events], now, ended


def _batch_bytes(found: tuple[list, tuple, bool]) -> int:
    return _BATCH_OVERHEAD + sum(_EVENT_OVERHEAD + len(body) for _, _, body in found[0])


def _public_keep(key: tuple, found: tuple[list, tuple, bool]) -> tuple[list, tuple, bool]:
    """Keep ``found`` as the batch of ``key``; return what is kept."""
    global _public_bytes
    found = _compact(found)
    with _public_lock:
        previous = _public_batches.pop(key, None)
        if previous is not None:
            _public_bytes -= _batch_bytes(previous)
        _public_batches[key] = found
        _public_bytes += _batch_bytes(found)
        while _public_batches and (
            len(_public_batches) > _PUBLIC_MAX or _public_bytes > _PUBLIC_MAX_BYTES
        ):
            _public_bytes -= _batch_bytes(_public_batches.popitem(last=False)[1])
    return found


def match_batch(
    plan: StreamPlan, since: tuple[int, str] | None, hint: tuple[int, str] | None = None
) -> tuple[list, tuple, bool]:
    """Return the events after ``since`` (ply, status): each new move, then the view.

    Returns ``(events, (ply, status), ended)``; ``events`` is a list of
    ``(name, id, body)``, ``body`` the event's payload as JSON. A spectator's batches
    are shared by every spectator at the same point (one read for all of them); ``hint``
    is where the wake-up said the match is.
    """
    if not plan.mine:
        progress = hint or match_progress(plan.match_id)
        if progress is not None:
            key = (plan.match_id, since, progress[0], progress[1])
            found = public_batch(key)
            if found is None:
                found = _public_keep(key, _match_batch(plan, since))
            return found
    return _match_batch(plan, since)


def public_batch(key: tuple) -> tuple[list, tuple, bool] | None:
    """Return the spectators' batch for ``(match, since, ply, status)`` if one was read."""
    with _public_lock:
        return _public_batches.get(key)


def _match_batch(plan: StreamPlan, since: tuple[int, str] | None) -> tuple[list, tuple, bool]:
    match = match_row(plan.match_id)
    if match is None:
        deleted = orjson.dumps({"match": plan.match_id, "status": "deleted"})
        return [("end", None, deleted)], since, True
    now = (match.ply, str(match.status))
    if since == now:
        return [], now, False
    events = []
    # The public log of a sealed match is hidden from spectators: it would show cards of
    # its group's other matches (games.reading); its players saw every move already.
    log_shown = bool(plan.mine) and match.status == Match.Status.ACTIVE
    if since is not None and match.ply > since[0] and (log_shown or match_reading(match).public):
        # Up to the row read: a move committed since then comes with the next batch.
        moves = Move.objects.filter(
            match_id=match.pk, ply__gte=since[0], ply__lt=match.ply
        ).order_by("ply")
        for move in moves.values_list("ply", "seat", "move", "received_at"):
            ply = move[0] + 1
            data = {"match": match.pk, "ply": ply, "seat": move[1], "move": move[2],
                    "received_at": move[3]}  # fmt: skip
            events.append(("move", ply, orjson.dumps(data)))
    seat = my_seat(plan.mine, plan.requested, match.to_move) if plan.mine else None
    view = player_view(match, plan.mine, seat, store=False)
    events.append(("state", match.ply, orjson.dumps(view)))
    ended = match.status in TERMINAL
    if ended:
        events.append(("end", match.ply, orjson.dumps({
            "match": match.pk, "status": match.status, "result": match.result,
            "end_reason": match.end_reason,
        })))  # fmt: skip
    return events, now, ended


async def lease_for(plan: StreamPlan) -> Lease | Uncounted | HttpResponse:
    """The stream's place under the caps: off the loop when counted (Redis), else at once."""
    if not capped(plan):
        return UNCOUNTED
    return await live.run_sync(stream_lease, plan)


async def run_match_stream(plan: StreamPlan) -> HttpResponse:
    lease = await lease_for(plan)
    if isinstance(lease, HttpResponse):
        return lease
    return stream_response(plan.media_type, _match_events(plan, lease))


_reading: dict[tuple, asyncio.Future] = {}


async def _shared_public_batch(plan: StreamPlan, since, hint) -> tuple[list, tuple, bool]:
    """A spectator's batch: taken from the cache, or read once for every spectator woken
    by the same change (they all wait on one read, not one read each)."""
    key = (plan.match_id, since, *hint)
    found = public_batch(key)
    if found is not None:
        return found
    reading = _reading.get(key)
    if reading is None:
        reading = asyncio.ensure_future(live.run_sync(match_batch, plan, since, hint))
        _reading[key] = reading
        reading.add_done_callback(lambda _, key=key: _reading.pop(key, None))
    # Shielded: a spectator that leaves does not cancel the read the others wait for.
    return await asyncio.shield(reading)


async def _match_events(plan: StreamPlan, lease: Lease | Uncounted) -> AsyncIterator[bytes]:
    hub = live.hub()
    waiter = hub.waiter([live.match_key(plan.match_id)])  # before the first read
    media = plan.media_type
    try:
        if media == SSE:
            yield f"retry: {SSE_RETRY_MS}\n\n".encode()
        await waiter.ready()
        since = None
        if plan.after_ply is not None:
            since = (plan.after_ply, "")  # resume: the moves after it, then the view
        hint = None
        while True:
            if hub.closing:
                yield reconnect(media)
                return
            if hint is not None and not plan.mine:
                found = await _shared_public_batch(plan, since, hint)
            else:
                found = await live.run_sync(match_batch, plan, since, hint)
            events, since, ended = found
            chunk = b"".join(encode(media, name, data, event_id) for name, event_id, data in events)
            found = events = None  # held no longer than needed: the stream may sleep for long
            if chunk:
                yield chunk
            if ended or not in_async_server.get():
                return  # a WSGI server (or the test client) cannot hold it: what is there now
            while not await waiter.wait(settings.LIVE_KEEPALIVE, shared_timer=True):
                yield keep_alive(media)  # nothing changed: nothing to read
            messages = waiter.take()
            hint = None
            if messages and not waiter.overflowed:
                newest = max(messages, key=lambda m: (m["ply"], m["status"] in TERMINAL))
                hint = (newest["ply"], newest["status"])
            waiter.overflowed = False
    finally:
        waiter.close()
        lease.release()


# --- The account stream -----------------------------------------------------------------


def account_matches(user) -> list[dict]:
    """Return the active matches where ``user`` holds a seat, as account-stream facts."""
    from django.db.models import Q

    rows = (
        Match.objects.filter(status=Match.Status.ACTIVE)
        .filter(Q(seats__user=user) | Q(seats__bot__account=user))
        .distinct()
        .values_list("id", "ply", "status", "to_move")
    )
    return [
        {"match": match_id, "ply": ply, "status": status, "to_move": to_move, "change": "started"}
        for match_id, ply, status, to_move in rows
    ]


def account_facts(user, message: dict, known: dict) -> list[tuple[str, dict]]:
    """Return the events ``message`` (a change of one match) makes for ``user``.

    ``known`` maps a match id to the last ply announced as ``your_turn`` (and remembers
    which matches were announced as started), so nothing is said twice.
    """
    match_id = message["match"]
    events = []
    first = match_id not in known
    if message["status"] == Match.Status.WAITING:
        return events
    match = match_row(match_id)
    if match is None:
        return events
    mine = seats_of(user, match)
    if not mine:
        return events
    if first:
        known[match_id] = None
        events.append(("match_started", {
            "match": match.pk, "game": match.game, "players": match.players,
            "your_seats": mine, "started_at": match.started_at,
        }))  # fmt: skip
    if match.status in TERMINAL:
        known.pop(match_id, None)
        events.append(("match_finished", {
            "match": match.pk, "status": match.status, "result": match.result,
            "end_reason": match.end_reason, "your_seats": mine,
        }))  # fmt: skip
        return events
    if match.to_move in mine and known.get(match_id) != match.ply:
        known[match_id] = match.ply
        view = player_view(match, mine, match.to_move, store=False)
        events.append(("your_turn", {
            "match": match.pk, "ply": match.ply, "seat": match.to_move,
            "deadline_at": match.deadline_at, "legal_moves": view["legal_moves"],
            "view": view["view"],
        }))  # fmt: skip
    return events


def account_batch(user, messages: list[dict] | None, known: dict) -> list[tuple[str, dict]]:
    """Events for ``messages``; with None, for every active match and every notice
    outstanding (opening, resync). Notices (``games.account_notices``) come after the
    matches' events."""
    notices = account_notices.notice_events(user, messages, known)
    if messages is None:
        messages = account_matches(user)
    latest: dict[int, dict] = {}
    for message in messages:  # the latest word on each match is enough
        if not account_notices.is_notice(message):
            latest[message["match"]] = message
    events = []
    for message in latest.values():
        events.extend(account_facts(user, message, known))
    return events + notices


def account_chunk(user, messages: list[dict] | None, known: dict, media_type: str) -> bytes:
    """``account_batch``'s events, framed for ``media_type``."""
    events = account_batch(user, messages, known)
    return b"".join(encode(media_type, name, orjson.dumps(data)) for name, data in events)


async def run_account_stream(plan: StreamPlan) -> HttpResponse:
    lease = await lease_for(plan)
    if isinstance(lease, HttpResponse):
        return lease
    return stream_response(plan.media_type, _account_events(plan, lease))


async def _account_events(plan: StreamPlan, lease: Lease | Uncounted) -> AsyncIterator[bytes]:
    hub = live.hub()
    waiter = hub.waiter([live.account_key(plan.user.pk)])  # before the first read
    media = plan.media_type
    known: dict = {}
    try:
        if media == SSE:
            yield f"retry: {SSE_RETRY_MS}\n\n".encode()
        await waiter.ready()
        messages = None
        while True:
            if hub.closing:
                yield reconnect(media)
                return
            # Framed in the reader thread: the stream keeps bytes, not the events' views.
            chunk = await live.run_sync(account_chunk, plan.user, messages, known, media)
            messages = None
            if chunk:
                yield chunk
            if not in_async_server.get():
                return  # as a match's stream under a WSGI server
            while not await waiter.wait(settings.LIVE_KEEPALIVE, shared_timer=True):
                yield keep_alive(media)  # nothing changed: nothing to read
            messages = waiter.take()
            if waiter.overflowed:  # messages were lost: look at every match again
                waiter.overflowed = False
                messages = None
    finally:
        waiter.close()
        lease.release()
