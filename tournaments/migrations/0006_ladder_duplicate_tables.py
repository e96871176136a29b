"""A ladder table is one deck dealt in every seat rotation of its bots: each deal's row
names its table (the first deal's match) and its rotation, and keeps the deck's seed."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0005_watchdog_every_10_seconds")]

    operations = [
        migrations.AddField(
            model_name="laddermatch",
            name="table",
            field=models.PositiveBigIntegerField(
                blank=True,
                db_index=True,
                null=True,
                help_text="The ladder table (its first deal's match) this deal is a rotation of.",
            ),
        ),
        migrations.AddField(
            model_name="laddermatch",
            name="rotation",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="Seat rotation of the table's bots in this deal."
            ),
        ),
        migrations.AddField(
            model_name="laddermatch",
            name="deck_seed",
            field=models.CharField(
                blank=True, max_length=64, help_text="Secret seed of the table's one deck."
            ),
        ),
    ]
