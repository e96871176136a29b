from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("bots", "0009_lease_calling_owner_unconstrained")]

    operations = [
        migrations.AddField(
            model_name="botturnlease",
            name="lapses",
            field=models.PositiveSmallIntegerField(default=0),
        ),
    ]
