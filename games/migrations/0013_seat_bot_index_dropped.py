# A seat's own index on its bot is dropped: the (bot, match) index of 0011 serves every
# lookup the old one did (the archive's ?bot= filter walks it).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('bots', '0011_merge_secrets_and_lapses'),
        ('games', '0012_move_comment'),
    ]

    operations = [
        migrations.AlterField(
            model_name='seat',
            name='bot',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='seats', to='bots.bot'),
        ),
    ]
