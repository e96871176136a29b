"""Python, Django and Celery workers in other processes, with an environment of the
test's choosing: the settings variables of this process left out, the given ones set."""

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
from django.db import connection

from benchmarks.harness import free_port, stop_process_group, wait_until

BASE_DIR = Path(__file__).resolve().parent.parent

# The variables the settings read. A subprocess test starts with none of them set.
SETTINGS_VARIABLES = (
    "DJANGO_SETTINGS_MODULE",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL",
    "DATABASE_PREPARED_STATEMENTS",
    "CARDSERVER_VAR_DIR",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "CELERY_TASK_ALWAYS_EAGER",
    "LOG_LEVEL",
    "LOG_FORMAT",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_COOKIES",
    "BOTS_ALLOW_PRIVATE_URLS",
    "API_MAX_BODY_SIZE",
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
)


def clean_environment(var_dir: Path, **variables: str) -> dict[str, str]:
    """Return this process's environment without the settings variables, plus ``variables``."""
    environment = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    environment["CARDSERVER_VAR_DIR"] = str(var_dir)
    environment.update(variables)
    return environment


def run_python(code: str, var_dir: Path, **variables: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter with the settings variables given, and no others."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=clean_environment(var_dir, **variables),
        capture_output=True,
        text=True,
        timeout=120,
    )


def worker_database_url() -> str:
    """Return the URL of the test database (PostgreSQL, or SQLite's file), for a worker in
    another process."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    return f"postgres://{db['USER'] or ''}{password}@{host}/{db['NAME']}"


def start_solo_worker(
    queue: str, environment: dict[str, str], *options: str, stderr=subprocess.PIPE
) -> subprocess.Popen:
    """Start a Celery worker (solo pool) that reads only ``queue``, in ``environment``.

    ``queue`` is its default queue too, and it also reads that queue's HTTP bot calls
    (``<queue>-bot-calls``, ``BOTS_CALL_QUEUE``) and interactive play (``<queue>-interactive``,
    ``INTERACTIVE_QUEUE``): one process plays the part of the CPU workers, of the
    interactive worker and of the I/O pool. ``options`` go on its command line; its output is
    dropped, its errors go to ``stderr`` (a pipe by default, read with ``communicate``).
    """
    environment = {**environment, "CELERY_TASK_DEFAULT_QUEUE": queue}
    environment.pop("BOTS_CALL_QUEUE", None)
    environment.pop("INTERACTIVE_QUEUE", None)
    queues = f"{queue},{queue}-interactive,{queue}-bot-calls"
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--pool=solo",
         "--without-mingle", "--without-gossip", "--loglevel=WARNING", "-Q", queues, *options],
        cwd=BASE_DIR, env=environment, stdout=subprocess.DEVNULL, stderr=stderr, text=True,
    )  # fmt: skip


@contextlib.contextmanager
def web_process(var_dir: Path, **variables: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """Serve the arena from a uvicorn process on ``cardserver.asgi`` (the test database,
    the broker's Redis, DEBUG on, ``variables`` set); yield its URL and the process once it
    answers the health check, and stop it afterwards. Its output goes to
    ``<var_dir>/uvicorn.log``."""
    environment = clean_environment(
        var_dir,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
        DATABASE_URL=worker_database_url(),
        CELERY_BROKER_URL=os.environ["CELERY_BROKER_URL"],
        DEBUG="1",
        LOG_LEVEL="WARNING",
        **variables,
    )
    port = free_port()
    var_dir.mkdir(parents=True, exist_ok=True)
    with (var_dir / "uvicorn.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "cardserver.asgi:application", "--host",
             "127.0.0.1", "--port", str(port), "--no-access-log"],
            cwd=BASE_DIR, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _healthy(url), timeout=60, what=f"uvicorn in {var_dir}")
        yield url, process
    finally:
        stop_process_group(process)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/health/", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def load_settings(var_dir: Path, **variables: str) -> dict:
    """Return the upper-case names of ``cardserver.settings`` loaded with ``variables``."""
    result = run_python(
        "import json\n"
        "from cardserver import settings as s\n"
        "print(json.dumps({n: getattr(s, n) for n in dir(s) if n.isupper()}, default=str))",
        var_dir,
        **variables,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
