"""Create the four rating pools and the periodic tasks of tournaments, ratings and ladder.

The schedules live in django-celery-beat's tables, so they are changed in the admin:
the ladder's rate is its tick's interval (and ``LADDER_TABLES_PER_TICK``). The ladder
is created disabled; an operator enables it when the arena has bots to rank.
"""

from django.db import migrations

POOLS = ("durak-2p", "durak-3p", "durak-4p", "volynshchik")
# name: (task, seconds, enabled)
SCHEDULES = {
    "tournaments: ladder tick": ("tournaments.tasks.ladder_tick", 30, False),
    "tournaments: resend abandoned tournament matches": (
        "tournaments.tasks.tournaments_watchdog",
        60,
        True,
    ),
    "tournaments: apply ratings of matches not applied yet": (
        "tournaments.tasks.apply_pending_ratings",
        300,
        True,
    ),
    "tournaments: refit the ladder's ratings": ("tournaments.tasks.refit_all_pools", 600, True),
}


def create(apps, schema_editor):
    RatingPool = apps.get_model("tournaments", "RatingPool")
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for key in POOLS:
        RatingPool.objects.get_or_create(key=key)
    for name, (task, seconds, enabled) in SCHEDULES.items():
        every, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.update_or_create(
            name=name, defaults={"task": task, "interval": every, "enabled": enabled}
        )


def delete(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=list(SCHEDULES)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, delete)]
