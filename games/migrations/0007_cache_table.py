"""The database cache's table (the shared rate-limit counters when there is no Redis).

Created by ``migrate`` so that no deployment can forget ``manage.py createcachetable``: a
missing table turned every throttled request into a 500. ``createcachetable`` creates only
the tables of ``CACHES`` entries that use the database backend, and none that exists.
"""

from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("games", "0006_seat_bot_version")]

    operations = [migrations.RunPython(create_cache_tables, migrations.RunPython.noop)]
