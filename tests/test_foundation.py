"""The foundation: settings from the environment, API conventions, Celery, Django checks."""

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.db import OperationalError, connection
from django.http import Http404
from django.test import Client, RequestFactory, override_settings
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer

from cardserver import celery_app
from cardserver.api import exception_handler
from cardserver.views import server_error

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

SQLITE_OPTIONS = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}


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
    """Return the URL of the test database (PostgreSQL), for a worker in another process."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    return f"postgres://{db['USER'] or ''}{password}@{host}/{db['NAME']}"


def start_solo_worker(
    queue: str, environment: dict[str, str], *options: str, stderr=subprocess.PIPE
) -> subprocess.Popen:
    """Start a Celery worker (solo pool) that reads only ``queue``, in ``environment``.

    ``queue`` is its default queue too, and it also reads that queue's HTTP bot calls
    (``<queue>-bot-calls``, ``BOTS_CALL_QUEUE``): one process plays the part of the CPU
    workers and of the I/O pool. ``options`` go on its command line; its output is
    dropped, its errors go to ``stderr`` (a pipe by default, read with ``communicate``).
    """
    environment = {**environment, "CELERY_TASK_DEFAULT_QUEUE": queue}
    environment.pop("BOTS_CALL_QUEUE", None)
    queues = f"{queue},{queue}-bot-calls"
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "cardserver", "worker", "--pool=solo",
         "--without-mingle", "--without-gossip", "--loglevel=WARNING", "-Q", queues, *options],
        cwd=BASE_DIR, env=environment, stdout=subprocess.DEVNULL, stderr=stderr, text=True,
    )  # fmt: skip


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


def render(data) -> object:
    """Return ``data`` as a client would read it: rendered to JSON and parsed back."""
    return json.loads(JSONRenderer().render(data))


# --- Settings ---------------------------------------------------------------------------


def test_database_defaults_to_sqlite_in_var_dir_with_locking_options(tmp_path):
    var_dir = tmp_path / "var"

    database = load_settings(var_dir)["DATABASES"]["default"]

    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert database["NAME"] == str(var_dir / "db.sqlite3")
    assert database["OPTIONS"] == SQLITE_OPTIONS
    assert var_dir.is_dir()


def test_postgres_database_url_keeps_connections_with_health_checks(tmp_path):
    database = load_settings(
        tmp_path, DATABASE_URL="postgres://arena:secret@db.example.invalid:5433/arena"
    )["DATABASES"]["default"]

    # Django's backend with a cheaper health check (cardserver/postgresql/base.py).
    assert database["ENGINE"] == "cardserver.postgresql"
    assert (database["NAME"], database["USER"], database["PASSWORD"]) == (
        "arena",
        "arena",
        "secret",
    )
    assert (database["HOST"], database["PORT"]) == ("db.example.invalid", 5433)
    assert database["CONN_MAX_AGE"] == 60
    assert database["CONN_HEALTH_CHECKS"] is True
    assert "transaction_mode" not in database.get("OPTIONS", {})
    # Parameters bound on the server, statements run 5 times on a connection prepared.
    assert database["OPTIONS"]["server_side_binding"] is True
    assert database["OPTIONS"]["prepare_threshold"] == 5


def test_prepared_statements_can_be_turned_off_for_a_pooler(tmp_path):
    database = load_settings(
        tmp_path,
        DATABASE_URL="postgres://arena:secret@db.example.invalid:5433/arena",
        DATABASE_PREPARED_STATEMENTS="0",
    )["DATABASES"]["default"]

    assert "server_side_binding" not in database["OPTIONS"]
    assert "prepare_threshold" not in database["OPTIONS"]


def test_sqlite_connections_use_wal_and_normal_sync(tmp_path):
    result = run_python(
        "import django\n"
        "django.setup()\n"
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('PRAGMA journal_mode')\n"
        "    journal = cursor.fetchone()[0]\n"
        "    cursor.execute('PRAGMA synchronous')\n"
        "    print(journal, cursor.fetchone()[0])\n",
        tmp_path,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
    )

    assert result.returncode == 0, result.stderr
    # synchronous=1 is NORMAL.
    assert result.stdout.split() == ["wal", "1"]


def test_debug_defaults_on_with_local_hosts(tmp_path):
    loaded = load_settings(tmp_path)

    assert loaded["DEBUG"] is True
    assert loaded["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]", "testserver"]


def test_allowed_hosts_is_a_comma_list(tmp_path):
    loaded = load_settings(tmp_path, ALLOWED_HOSTS=" arena.example.org, api.example.org ,")

    assert loaded["ALLOWED_HOSTS"] == ["arena.example.org", "api.example.org"]


def test_debug_off_has_no_default_hosts(tmp_path):
    loaded = load_settings(tmp_path, DEBUG="off", SECRET_KEY="k" * 50)

    assert loaded["DEBUG"] is False
    assert loaded["ALLOWED_HOSTS"] == []
    assert loaded["SECRET_KEY"] == "k" * 50


def test_debug_off_without_secret_key_is_rejected(tmp_path):
    result = run_python("import cardserver.settings", tmp_path, DEBUG="0")

    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set when DEBUG is off." in result.stderr


def test_boolean_variable_that_is_not_a_boolean_is_rejected(tmp_path):
    result = run_python("import cardserver.settings", tmp_path, DEBUG="maybe")

    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_celery_defaults_to_embedded_filesystem_broker_in_var_dir(tmp_path):
    var_dir = tmp_path / "var"

    loaded = load_settings(var_dir)

    queue = var_dir / "celery" / "queue"
    options = loaded["CELERY_BROKER_TRANSPORT_OPTIONS"]
    assert loaded["CELERY_BROKER_URL"] == "filesystem://"
    assert options["data_folder_in"] == options["data_folder_out"] == str(queue)
    assert options["control_folder"] == str(var_dir / "celery" / "control")
    assert queue.is_dir()
    assert (var_dir / "celery" / "control").is_dir()
    assert loaded["CELERY_RESULT_BACKEND"] is None
    assert loaded["CELERY_TASK_ALWAYS_EAGER"] is False


def test_celery_broker_url_from_environment_replaces_embedded_broker(tmp_path):
    var_dir = tmp_path / "var"

    loaded = load_settings(var_dir, CELERY_BROKER_URL="redis://127.0.0.1:6379/3")

    assert loaded["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/3"
    assert "data_folder_in" not in loaded["CELERY_BROKER_TRANSPORT_OPTIONS"]
    assert not (var_dir / "celery").exists()


def test_embedded_broker_carries_a_task_message_from_producer_to_consumer(tmp_path):
    result = run_python(
        "import django\n"
        "django.setup()\n"
        "from cardserver import celery_app\n"
        "celery_app.send_task('arena.probe', args=[7], queue='probe')\n"
        "with celery_app.connection_for_read() as connection:\n"
        "    queue = connection.SimpleQueue('probe')\n"
        "    message = queue.get(timeout=10)\n"
        "    message.ack()\n"
        "    print(message.headers['task'], message.payload[0])\n",
        tmp_path,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["arena.probe", "[7]"]


def test_celery_app_acks_late_and_speaks_json_only():
    conf = celery_app.conf

    assert conf.broker_url == settings.CELERY_BROKER_URL
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_serializer == "json"
    assert conf.result_serializer == "json"
    assert conf.accept_content == ["json"]
    assert conf.timezone == "UTC"
    assert conf.beat_scheduler == "cardserver.beat:LockedDatabaseScheduler"


def test_celery_settings_override_takes_effect_and_is_undone():
    from cardserver.celery import settings_override

    conf = celery_app.conf
    eager, queue = conf.task_always_eager, conf.task_default_queue

    with settings_override(task_always_eager=not eager, task_default_queue="elsewhere"):
        assert conf.task_always_eager is (not eager)
        assert conf.task_default_queue == "elsewhere"

    assert (conf.task_always_eager, conf.task_default_queue) == (eager, queue)


def test_games_package_imports_without_django(tmp_path):
    result = run_python(
        "import sys\n"
        "import games\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.partition('.')[0] in {'django', 'rest_framework', 'celery'}))",
        tmp_path,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --- Django checks ----------------------------------------------------------------------


def test_system_checks_pass_without_warnings():
    call_command("check", fail_level="WARNING")


@pytest.mark.django_db
def test_models_have_their_migrations():
    # makemigrations --check exits with status 1 when a model change has no migration.
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


# --- API --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_health_reports_ok_after_querying_the_database(
    api_client, django_assert_num_queries, monkeypatch
):
    # Worker pings are tested in tests/ops/test_health.py.
    monkeypatch.setattr("cardserver.health.worker_queues", lambda timeout: {})
    monkeypatch.setattr("cardserver.views._workers_seen", None)
    with django_assert_num_queries(1):
        response = api_client.get("/api/v1/health/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["status"] == "ok"
    assert response.json()["database"] == "ok"


def test_health_answers_503_when_the_database_fails(api_client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    monkeypatch.setattr(celery_app.control, "ping", lambda **kwargs: [])

    response = api_client.get("/api/v1/health/")

    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["database"] == "error"


def test_schema_is_an_openapi_3_document_listing_the_health_endpoint(api_client):
    response = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"] == "Card Arena API"
    assert "get" in document["paths"]["/api/v1/health/"]


def test_schema_generates_and_validates_without_warnings(tmp_path):
    # Raises SchemaGenerationError on any warning, e.g. a view whose serializer is unknown.
    call_command(
        "spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml")
    )

    assert "/api/v1/health/" in (tmp_path / "schema.yaml").read_text()


def test_docs_page_serves_swagger_ui(api_client):
    response = api_client.get("/api/v1/docs/")

    assert response.status_code == 200
    assert b"SwaggerUIBundle" in response.content


# Without collectstatic (a test's STATIC_ROOT is empty), WhiteNoise serves the apps' files.
@override_settings(WHITENOISE_USE_FINDERS=True)
@pytest.mark.parametrize("page", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs_load_only_the_projects_own_static_files(page):
    client = Client()
    html = client.get(page).content.decode()

    assert "://" not in html  # no CDN, no web fonts: the page works offline
    resources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert resources
    for url in resources:
        assert url.startswith("/static/drf_spectacular_sidecar/"), url
        served = client.get(url)
        assert served.status_code == 200, url
        assert b"".join(served.streaming_content)


def test_unknown_api_url_answers_json_404(client):
    response = client.get("/api/v1/no-such-endpoint/")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {"code": "not_found", "message": "Not found.", "detail": None}
    }


def test_unknown_url_outside_the_api_answers_html_404(client):
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_wrong_method_answers_error_body(api_client):
    response = api_client.post("/api/v1/health/", {})

    assert response.status_code == 405
    assert response.json() == {
        "error": {
            "code": "method_not_allowed",
            "message": 'Method "POST" not allowed.',
            "detail": None,
        }
    }


@pytest.mark.django_db
def test_invalid_token_answers_401_with_error_body_and_challenge(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")

    # The schema view renders YAML unless JSON is asked for, errors included.
    response = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"] == {
        "code": "authentication_failed",
        "message": "Invalid token.",
        "detail": None,
    }


def test_valid_token_is_accepted(user_api_client):
    response = user_api_client.get("/api/v1/schema/")

    assert response.status_code == 200


class IllegalMove(exceptions.APIException):
    status_code = 409
    default_detail = "Illegal move."
    default_code = "illegal_move"


@pytest.mark.parametrize(
    ("exc", "status", "error"),
    [
        (
            exceptions.ValidationError({"seat": ["This field is required."]}),
            400,
            {
                "code": "invalid",
                "message": "Invalid input.",
                "detail": {"seat": ["This field is required."]},
            },
        ),
        (
            exceptions.ValidationError("Seat 3 is not in this match."),
            400,
            {
                "code": "invalid",
                "message": "Seat 3 is not in this match.",
                "detail": ["Seat 3 is not in this match."],
            },
        ),
        (
            exceptions.NotAuthenticated(),
            401,
            {
                "code": "not_authenticated",
                "message": "Authentication credentials were not provided.",
                "detail": None,
            },
        ),
        (
            PermissionDenied(),
            403,
            {
                "code": "permission_denied",
                "message": "You do not have permission to perform this action.",
                "detail": None,
            },
        ),
        (
            Http404("No Match matches the given query."),
            404,
            {"code": "not_found", "message": "No Match matches the given query.", "detail": None},
        ),
        (
            IllegalMove("illegal move: 8C cannot cover 9C (lower rank, same suit)"),
            409,
            {
                "code": "illegal_move",
                "message": "illegal move: 8C cannot cover 9C (lower rank, same suit)",
                "detail": None,
            },
        ),
        (
            IllegalMove({"ply": ["Expected ply 12."]}),
            409,
            {
                "code": "illegal_move",
                "message": "Illegal move.",
                "detail": {"ply": ["Expected ply 12."]},
            },
        ),
    ],
    ids=[
        "field-errors",
        "plain-errors",
        "not-authenticated",
        "django-permission-denied",
        "django-404",
        "custom-code",
        "custom-dict-detail",
    ],
)
def test_exception_handler_answers_error_body(exc, status, error):
    response = exception_handler(exc, {})

    assert response.status_code == status
    assert render(response.data) == {"error": error}


def test_exception_handler_leaves_unexpected_exceptions_to_django():
    assert exception_handler(ValueError("boom"), {}) is None


def test_server_error_under_api_answers_error_body():
    response = server_error(RequestFactory().get("/api/v1/anything/"))

    assert response.status_code == 500
    assert json.loads(response.content) == {
        "error": {"code": "server_error", "message": "A server error occurred.", "detail": None}
    }


def test_server_error_outside_api_answers_html():
    response = server_error(RequestFactory().get("/admin/"))

    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


# --- Real services ----------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgres_is_reached_through_psycopg_3():
    assert connection.vendor == "postgresql"
    assert connection.Database.__name__ == "psycopg"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        # Django 5.2 supports PostgreSQL 14 and later.
        assert int(cursor.fetchone()[0]) >= 140000


@pytest.mark.real_services
def test_worker_runs_a_task_sent_through_the_configured_broker(tmp_path):
    # The worker and the client run as separate processes with the broker of this run
    # (Redis in CI, the embedded one otherwise). A queue of their own keeps this test away
    # from any other worker on the same broker.
    results = tmp_path / "results"
    results.mkdir()
    queue = f"test-{uuid.uuid4().hex}"
    variables = {
        "DJANGO_SETTINGS_MODULE": "cardserver.settings",
        "CELERY_RESULT_BACKEND": f"file://{results}",
    }
    if "CELERY_BROKER_URL" in os.environ:
        variables["CELERY_BROKER_URL"] = os.environ["CELERY_BROKER_URL"]
    environment = clean_environment(tmp_path / "var", **variables)
    worker = start_solo_worker(queue, environment)
    try:
        client = subprocess.run(
            [
                sys.executable,
                "-c",
                "import django, json\n"
                "django.setup()\n"
                "from cardserver import celery_app\n"
                "result = celery_app.send_task(\n"
                f"    'celery.accumulate', args=[3, 4], queue={queue!r})\n"
                "print(json.dumps(result.get(timeout=60)))\n",
            ],
            cwd=BASE_DIR,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        worker.terminate()
        _, worker_errors = worker.communicate(timeout=60)

    assert client.returncode == 0, client.stderr + worker_errors
    assert json.loads(client.stdout) == [3, 4]
