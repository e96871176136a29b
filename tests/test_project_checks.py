"""The project as a whole: Django's checks, migrations for every model, an engine that
imports no Django, and PostgreSQL reached through psycopg 3."""

import pytest
from django.core.management import call_command
from django.db import connection

from tests.processes import run_python


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


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgres_is_reached_through_psycopg_3():
    assert connection.vendor == "postgresql"
    assert connection.Database.__name__ == "psycopg"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        # Django 5.2 supports PostgreSQL 14 and later.
        assert int(cursor.fetchone()[0]) >= 140000
