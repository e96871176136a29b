"""Register beat's periodic expiry of the challenges no one answered in time (every 30 s).

A challenge expires ``CHALLENGES_EXPIRE_AFTER`` seconds after it was made (ten minutes
by default); the sweep makes it so within 30 s of that, and an answer that comes later
finds it expired whether the sweep ran or not (``bots.challenges.challenges_expire``).
"""

from django.db import migrations

TASK_NAME = "bots: expire challenges no one answered in time"
SECONDS = 30


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=SECONDS, period="seconds")
    PeriodicTask.objects.update_or_create(
        name=TASK_NAME, defaults={"task": "bots.tasks.expire_challenges", "interval": every}
    )


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0013_challenge_expired"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
