from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0004_bot_turn_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="botturnlease",
            name="holder",
            field=models.CharField(default="", help_text="The driver's random id.", max_length=32),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="botturnlease",
            name="ply",
            field=models.PositiveIntegerField(help_text="The move being played when last claimed."),
        ),
    ]
