"""Production settings: `check --deploy` is clean, secrets have no defaults, logs are JSON."""

from __future__ import annotations

import json
import secrets

from tests.processes import BASE_DIR, clean_environment, load_settings, run_python

PRODUCTION = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "arena.example.org",
}


def production(**variables: str) -> dict[str, str]:
    return {**PRODUCTION, "SECRET_KEY": secrets.token_urlsafe(50), **variables}


def test_check_deploy_prints_no_warning_with_the_production_variables(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=clean_environment(tmp_path, **production()),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNINGS" not in result.stdout + result.stderr


def test_production_secret_key_has_no_default(tmp_path):
    result = run_python("import cardserver.settings", tmp_path, **PRODUCTION)

    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_debug_off_turns_on_https_cookies_hsts_and_frame_denial(tmp_path):
    loaded = load_settings(tmp_path, **production())

    assert loaded["SECURE_SSL_REDIRECT"] is True
    assert loaded["SECURE_HSTS_SECONDS"] >= 31536000
    assert loaded["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert loaded["SESSION_COOKIE_SECURE"] is True
    assert loaded["CSRF_COOKIE_SECURE"] is True
    assert loaded["X_FRAME_OPTIONS"] == "DENY"
    assert loaded["SECURE_REFERRER_POLICY"] == "same-origin"
    # The health check answers plain HTTP (load balancers, container health checks).
    assert loaded["SECURE_REDIRECT_EXEMPT"] == ["^api/v1/health/$"]
    # Bot URLs into the arena's own network are refused in production.
    assert loaded["BOTS_ALLOW_PRIVATE_URLS"] is False
    assert loaded["LOG_FORMAT"] == "json"
    assert "SECURE_PROXY_SSL_HEADER" not in loaded


def test_proxy_header_and_plain_http_are_opt_in(tmp_path):
    loaded = load_settings(
        tmp_path,
        **production(SECURE_PROXY_SSL_HEADER="1", SECURE_SSL_REDIRECT="0", SECURE_COOKIES="0"),
    )

    assert loaded["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert loaded["SECURE_SSL_REDIRECT"] is False
    assert loaded["SESSION_COOKIE_SECURE"] is False


def test_development_defaults_are_plain_http_and_text_logs(tmp_path):
    loaded = load_settings(tmp_path)

    assert loaded["SECURE_SSL_REDIRECT"] is False
    assert loaded["SECURE_HSTS_SECONDS"] == 0
    assert loaded["SESSION_COOKIE_SECURE"] is False
    assert loaded["BOTS_ALLOW_PRIVATE_URLS"] is True
    assert loaded["LOG_FORMAT"] == "text"


def test_unknown_log_format_is_rejected(tmp_path):
    result = run_python("import cardserver.settings", tmp_path, LOG_FORMAT="xml")

    assert result.returncode != 0
    assert "LOG_FORMAT='xml' is not json or text" in result.stderr


def test_production_process_logs_one_json_object_per_line(tmp_path):
    result = run_python(
        "import django, logging\n"
        "django.setup()\n"
        "from cardserver.logs import match_context\n"
        "log = logging.getLogger('games.services')\n"
        "log.info('plain line')\n"
        "with match_context(7):\n"
        "    log.warning('about a match: %s', 'yes')\n"
        "try:\n"
        "    1 / 0\n"
        "except ZeroDivisionError:\n"
        "    log.exception('failed', extra={'match_id': 9})\n",
        tmp_path,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
        **production(),
    )

    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert [line["message"] for line in lines] == ["plain line", "about a match: yes", "failed"]
    assert "match_id" not in lines[0]
    assert lines[1]["match_id"] == 7 and lines[1]["level"] == "WARNING"
    assert lines[2]["match_id"] == 9
    assert "ZeroDivisionError" in lines[2]["exc_info"]
    assert {"time", "level", "logger", "message"} <= set(lines[0])
