"""Register beat's periodic hand-over of arena turns whose driver died (every 10 s)."""

from django.db import migrations

TASK_NAME = "bots: resume arena turns whose driver died"
SECONDS = 10


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=SECONDS, period="seconds")
    PeriodicTask.objects.update_or_create(
        name=TASK_NAME, defaults={"task": "bots.tasks.resume_abandoned_turns", "interval": every}
    )


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0007_bot_versions"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
