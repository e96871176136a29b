"""Turn the ladder on or off, or say how it is set.

    python manage.py ladder on [--every 30] [--tick]
    python manage.py ladder off
    python manage.py ladder status

The ladder is beat's periodic task ``tournaments.tasks.ladder_tick`` (created disabled by
the migration). ``on`` enables it, with ``--every`` its interval in seconds, and
``--tick`` also starts the first tables now instead of one interval later. ``make run``
runs ``ladder on --tick``, so that a fresh arena has rated matches within a minute.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django_celery_beat.models import IntervalSchedule, PeriodicTask

LADDER_TASK = "tournaments.tasks.ladder_tick"


class Command(BaseCommand):
    help = "Turn the ladder (beat's ladder tick) on or off, or show its setting."

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["on", "off", "status"])
        parser.add_argument("--every", type=int, help="Seconds between ticks (with on).")
        parser.add_argument("--tick", action="store_true", help="Start tables now (with on).")

    def handle(self, *args, action: str, every: int | None, tick: bool, **options) -> None:
        task = PeriodicTask.objects.filter(task=LADDER_TASK).first()
        if task is None:
            raise CommandError(f"no periodic task {LADDER_TASK}: run migrate first")
        if action != "status":
            task.enabled = action == "on"
            if every is not None:
                if every < 1:
                    raise CommandError("--every takes a number of seconds, at least 1")
                task.interval, _ = IntervalSchedule.objects.get_or_create(
                    every=every, period=IntervalSchedule.SECONDS
                )
                task.crontab = task.solar = task.clocked = None
                # A tick still queued when the next is due is dropped: behind a busy
                # worker, ticks would otherwise pile up in the broker without end.
                task.expire_seconds = every
                task.expires = None
            task.save()
        schedule = task.interval or task.crontab or task.solar or task.clocked
        self.stdout.write(f"ladder {'on' if task.enabled else 'off'}, every {schedule}")
        if tick and task.enabled:
            from tournaments.ladder import ladder_tick

            started = ladder_tick()
            self.stdout.write(f"started ladder matches: {started or 'none'}")
