"""Celery as configured: the embedded broker by default, a broker from the environment,
late acknowledgement and JSON only, and a worker that runs what a client sends."""

import json
import os
import subprocess
import sys
import uuid

import pytest
from django.conf import settings

from cardserver import celery_app
from tests.processes import (
    BASE_DIR,
    clean_environment,
    load_settings,
    run_python,
    start_solo_worker,
)


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
