"""Notices on the account stream that are not about a match (a challenge, say).

``games`` knows matches and nothing of the layers above it. A layer that has something
to tell an account registers, in its ``AppConfig.ready()``, a *reader* for its kind of
notice (``account_notice_reader_register``), and publishes a notice after the commit
that makes it (``account_notice_publish``). The hub's message only says which notice
changed (``{"notice": kind, "id": ...}``), as a match's message says which match did;
each account stream named then asks the reader what to send, reading the database.

A reader is called ``reader(user, ids, known)``: with ``ids`` None when the stream opens
(or lost messages and reads everything again), to return every notice still
outstanding for ``user``; else with the ids published since, to return their events
for ``user`` (none for an id that is not theirs). ``known`` is a dict the stream keeps
for this reader, so that the reader says nothing twice. It returns ``(event, data)``
pairs, which the stream frames as it frames its match events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.db import transaction

from games import live

Reader = Callable[[object, list[int] | None, dict], list[tuple[str, dict]]]

_readers: dict[str, Reader] = {}


def account_notice_reader_register(kind: str, reader: Reader) -> None:
    """Make ``reader`` the reader of the notices of ``kind`` (once, in ``ready()``)."""
    _readers[kind] = reader


def account_notice_publish(*, kind: str, notice_id: int, user_ids: Iterable[int]) -> None:
    """After the current transaction commits (at once outside one), wake the account
    streams of ``user_ids`` to read notice ``notice_id`` of ``kind``."""
    keys = sorted({live.account_key(user_id) for user_id in user_ids if user_id})
    message = {"notice": kind, "id": notice_id}
    transaction.on_commit(lambda: live.publish_keys(keys, message))


def is_notice(message: dict) -> bool:
    return "notice" in message


def notice_events(user, messages: list[dict] | None, known: dict) -> list[tuple[str, dict]]:
    """Return the events of the notices in ``messages`` for ``user`` (with None, of every
    notice outstanding), reader by reader."""
    events: list[tuple[str, dict]] = []
    for kind, reader in _readers.items():
        if messages is None:
            ids = None
        else:
            ids = list(dict.fromkeys(m["id"] for m in messages if m.get("notice") == kind))
            if not ids:
                continue
        events.extend(reader(user, ids, known.setdefault(("notice", kind), {})))
    return events
