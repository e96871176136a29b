"""What the health check asks of the Celery workers: who answers, and who reads the I/O
pool's queue.

One broadcast (``active_queues``) names the workers that answer and the queues each one
reads, so that a missing ``bot-calls`` worker, which would leave every HTTP bot's call
waiting in its queue while the rest of the site looks well, shows in ``GET
/api/v1/health/`` beside the workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings

from cardserver.celery import app as celery_app

logger = logging.getLogger(__name__)

UNKNOWN_WORKERS = {"status": "unknown", "answered": None, "names": []}

# Parts of the health answer that the apps above add (``games``: the stalled matches),
# by name: this package imports none of them.
_REPORTS: dict[str, Callable[[], dict]] = {}


def health_report_register(name: str, report: Callable[[], dict]) -> None:
    """Add ``report()``'s answer to the health check under ``name`` (once per name)."""
    _REPORTS[name] = report


def app_reports() -> dict[str, dict]:
    """Every registered part, ``{"status": "unknown"}`` for one that failed."""
    answers = {}
    for name, report in _REPORTS.items():
        try:
            answers[name] = report()
        except Exception:
            logger.exception("Health check: the %s report failed", name)
            answers[name] = {"status": "unknown"}
    return answers


def worker_queues(timeout: float) -> dict[str, list[str]]:
    """Return each worker that answered within ``timeout`` seconds, with the queues it reads.

    Raise whatever the transport raises when it cannot broadcast (the embedded broker may
    not), or when the broker is gone.
    """
    replies = celery_app.control.inspect(timeout=timeout).active_queues() or {}
    return {name: [queue["name"] for queue in queues or ()] for name, queues in replies.items()}


def workers_report(queues: dict[str, list[str]] | None) -> dict:
    """The ``workers`` part of the health answer; ``queues`` None when none could be asked."""
    if queues is None:
        return dict(UNKNOWN_WORKERS)
    names = sorted(queues)
    return {"status": "ok" if names else "none", "answered": len(names), "names": names}


def bot_calls_report(queues: dict[str, list[str]] | None, broker_url: str) -> dict:
    """The ``bot_calls`` part: the workers reading ``BOTS_CALL_QUEUE`` and the calls
    waiting in it (Redis only: one LLEN; null elsewhere or on failure).

    ``off`` when no call queue is configured (calls are made by the worker playing the turn).
    """
    queue = settings.BOTS_CALL_QUEUE
    if not queue:
        return {"status": "off", "consumers": [], "queue_depth": None}
    depth = _queue_depth(broker_url, queue)
    if queues is None:
        return {"status": "unknown", "consumers": [], "queue_depth": depth}
    consumers = sorted(name for name, names in queues.items() if queue in names)
    if not consumers:
        logger.warning(
            "Health check: no worker reads the %s queue; HTTP bots' calls wait in it", queue
        )
    return {"status": "ok" if consumers else "none", "consumers": consumers, "queue_depth": depth}


def _queue_depth(broker_url: str, queue: str) -> int | None:
    if not broker_url.startswith(("redis://", "rediss://", "unix://")):
        return None
    import redis

    timeout = settings.HEALTH_BROKER_TIMEOUT
    client = redis.Redis.from_url(
        broker_url, socket_connect_timeout=timeout, socket_timeout=timeout
    )
    try:
        return int(client.llen(queue))
    except (redis.RedisError, OSError):
        return None
    finally:
        client.close()
