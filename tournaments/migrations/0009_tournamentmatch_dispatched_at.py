"""Tournament matches record when they were sent to the workers (backpressure).

The pending matches of the current round of a running tournament were all sent when
their round started (the behaviour before): they are marked sent, so that the dispatcher
does not send them a second time.
"""

from django.db import migrations, models
from django.db.models import F


def mark_sent(apps, schema_editor):
    TournamentMatch = apps.get_model("tournaments", "TournamentMatch")
    TournamentMatch.objects.filter(
        tournament__status="running", round=F("tournament__current_round")
    ).exclude(status__in=["finished", "aborted", "cancelled"]).update(
        dispatched_at=F("updated_at")
    )


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0008_merge_sequential_tests_and_pools")]

    operations = [
        migrations.AddField(
            model_name="tournamentmatch",
            name="dispatched_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(mark_sent, migrations.RunPython.noop),
    ]
