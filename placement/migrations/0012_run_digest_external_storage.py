"""A placement keeps a digest of its stored run (`run_digest`), so a run that changes nothing is not
written again. On PostgreSQL the two columns a run writes already compressed (the explanation and the
cluster record, zlib) are stored out of line without a second compression attempt (STORAGE EXTERNAL)."""

from collections.abc import Callable

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

COLUMNS = ("explanation", "cluster_record")


def storage(strategy: str) -> Callable[[StateApps, BaseDatabaseSchemaEditor], None]:
    """Sets the storage strategy of COLUMNS (PostgreSQL only; other databases have none)."""

    def alter(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(apps.get_model("placement", "Placement")._meta.db_table)
        for column in COLUMNS:
            schema_editor.execute(
                f"ALTER TABLE {table} ALTER COLUMN {schema_editor.quote_name(column)} SET STORAGE {strategy}"
            )

    return alter


class Migration(migrations.Migration):
    dependencies = [
        ("placement", "0011_reschedule_queued_later"),
    ]

    operations = [
        migrations.AddField(
            model_name="placement",
            name="run_digest",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.RunPython(storage("EXTERNAL"), storage("EXTENDED")),
    ]
