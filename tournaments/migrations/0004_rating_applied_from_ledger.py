"""Mark the matches the ratings ledger already holds as applied (games.Match.rating_applied)."""

from django.db import migrations


def mark_applied(apps, schema_editor):
    Match = apps.get_model("games", "Match")
    RatedMatch = apps.get_model("tournaments", "RatedMatch")
    Match.objects.filter(pk__in=RatedMatch.objects.values("match_id")).update(rating_applied=True)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0004_match_rating_applied"),
        ("tournaments", "0003_ladder_match_attempts"),
    ]

    operations = [migrations.RunPython(mark_applied, migrations.RunPython.noop)]
