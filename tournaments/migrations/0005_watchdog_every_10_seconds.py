"""The tournament watchdog runs every 10 s (was 60 s): a match whose driver died is sent
again within about 30 s (TOURNAMENT_ABANDONED_AFTER, and the driver's claim lapsing)."""

from django.db import migrations

NAME = "tournaments: resend abandoned tournament matches"


def every(seconds):
    def change(apps, schema_editor):
        IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
        PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.filter(name=NAME).update(interval=interval)

    return change


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0004_rating_applied_from_ledger"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(every(10), every(60))]
