"""Register the periodic sweep that forfeits matches whose move deadline passed.

Each move also schedules a deadline check of its own (``games.tasks.enforce_move_deadline``);
the sweep is the backstop for a check that was lost (a broker flushed, a worker killed).
The schedule lives in django-celery-beat's tables, so it can be changed in the admin.
"""

from django.db import migrations

TASK_NAME = "games: forfeit matches whose move deadline passed"
SWEEP_SECONDS = 10


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=SWEEP_SECONDS, period="seconds")
    PeriodicTask.objects.update_or_create(
        name=TASK_NAME,
        defaults={"task": "games.tasks.sweep_overdue_matches", "interval": every},
    )


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0002_match_deadline_arena_seats_idempotency_key"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
