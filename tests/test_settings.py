"""Settings from the environment: database, hosts, secrets, booleans; and the settings
package, one module per concern, each setting defined in one of them."""

import ast
from collections import defaultdict
from pathlib import Path

import cardserver.settings
from tests.processes import load_settings, run_python

SQLITE_OPTIONS = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}


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


def test_number_variable_that_is_not_a_number_is_rejected_in_one_line(tmp_path):
    result = run_python("import cardserver.settings", tmp_path, EMAIL_PORT="abc")

    assert result.returncode != 0
    assert result.stderr.splitlines()[-1] == (
        "django.core.exceptions.ImproperlyConfigured: EMAIL_PORT='abc' is not a whole number."
    )


def test_every_bad_variable_is_named_on_the_one_error_line(tmp_path):
    result = run_python(
        "import cardserver.settings", tmp_path, LIVE_KEEPALIVE="fast", TOURNAMENT_IN_FLIGHT="2.5"
    )

    assert result.returncode != 0
    assert result.stderr.splitlines()[-1] == (
        "django.core.exceptions.ImproperlyConfigured: LIVE_KEEPALIVE='fast' is not a number. "
        "TOURNAMENT_IN_FLIGHT='2.5' is not a whole number."
    )


def test_blank_variable_takes_its_default(tmp_path):
    settings = load_settings(tmp_path, EMAIL_PORT=" ", DEBUG="", SITE_URL="  ")

    assert (settings["EMAIL_PORT"], settings["DEBUG"]) == (587, True)
    assert settings["SITE_URL"] == "http://127.0.0.1:8000"


def test_settings_read_the_environment_only_through_the_env_module():
    readers = {
        path.name
        for path in SETTINGS_DIR.glob("*.py")
        if "os.environ" in path.read_text() or "getenv" in path.read_text()
    }

    assert readers == set()


# --- The settings package -------------------------------------------------------------


SETTINGS_DIR = Path(cardserver.settings.__file__).parent


def assigned_names(tree: ast.Module) -> set[str]:
    """Return the upper-case names a module assigns at its top level (in ifs and loops too)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id.isupper():
                    names.add(name.id)
    return names


def test_each_setting_is_defined_in_one_settings_module_only():
    # The package's __init__ composes the modules by star imports, where a second
    # definition of a name would silently replace the first.
    modules = defaultdict(list)
    # env.py is not composed: it declares the environment variables (named as the settings
    # they feed), not settings.
    for path in sorted(set(SETTINGS_DIR.glob("*.py")) - {SETTINGS_DIR / "env.py"}):
        for name in assigned_names(ast.parse(path.read_text())):
            modules[name].append(path.name)

    assert {name: where for name, where in modules.items() if len(where) > 1} == {}


def test_settings_package_composes_every_settings_module():
    init = ast.parse((SETTINGS_DIR / "__init__.py").read_text())
    composed = {
        node.module.rpartition(".")[2]
        for node in init.body
        if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"]
    }

    # env.py holds the readers of the environment, no settings.
    assert composed == {p.stem for p in SETTINGS_DIR.glob("*.py")} - {"__init__", "env"}
