"""Caps on open streams: per account and per client IP, in one web process.

A stream is counted when it is opened (a ``Lease``) and given back when it ends, however
it ends: the lease is released by the stream's ``finally``, or when the lease itself is
collected for a response that was never iterated.
"""

from __future__ import annotations

import threading
from collections import Counter

from django.conf import settings
from django.http import HttpResponse

from cardserver.api import error_body

_open_by_account: Counter = Counter()
_open_by_ip: Counter = Counter()
# Reentrant: a Lease collected (``__del__``) while this thread holds the lock takes it again.
_caps_lock = threading.RLock()


class Lease:
    """One open stream counted against its account's and its IP's caps, until released."""

    def __init__(self, account: int | None, ip: str) -> None:
        self.account, self.ip, self.released = account, ip, False

    def release(self) -> None:
        with _caps_lock:
            if self.released:
                return
            self.released = True
            if self.account is not None:
                _open_by_account[self.account] -= 1
                if _open_by_account[self.account] <= 0:
                    del _open_by_account[self.account]
            _open_by_ip[self.ip] -= 1
            if _open_by_ip[self.ip] <= 0:
                del _open_by_ip[self.ip]

    def __del__(self) -> None:  # a response never iterated still gives its place back
        self.release()


def stream_lease(plan) -> Lease | HttpResponse:
    """Count a new stream, or answer 429 if its account or IP holds its cap already."""
    account = plan.user.pk if getattr(plan.user, "is_authenticated", False) else None
    per_account = settings.LIVE_MAX_STREAMS_PER_ACCOUNT
    per_ip = settings.LIVE_MAX_STREAMS_PER_IP
    with _caps_lock:
        over = None
        if account is not None and per_account and _open_by_account[account] >= per_account:
            over = ("account", per_account)
        elif per_ip and _open_by_ip[plan.ip] >= per_ip:
            over = ("IP address", per_ip)
        if over is None:
            if account is not None:
                _open_by_account[account] += 1
            _open_by_ip[plan.ip] += 1
            return Lease(account, plan.ip)
    retry = 5
    from games.streams import json_answer

    response = json_answer(
        error_body(
            code="too_many_streams",
            message=f"This {over[0]} holds {over[1]} open streams already; close one first.",
            detail={"limit": over[1], "per": over[0], "retry_after": retry},
        ),
        status=429,
    )
    response["Retry-After"] = str(retry)
    return response
