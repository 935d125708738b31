"""The stored explanation moves from jsonb to zlib-compressed JSON bytes (core.fields.CompressedJSONField):
writing 0.5 MB of jsonb per placement was most of a full reschedule's database time at 10k clusters."""

from django.db import migrations

import core.fields

BATCH = 200


def copy_explanation(source: str, target: str):  # noqa: ANN201 - a RunPython callable
    """Copy the explanation from field `source` to field `target`, in batches (forward: pack; back: unpack)."""

    def copy(apps, schema_editor) -> None:  # noqa: ANN001 - migration signature
        Placement = apps.get_model("placement", "Placement")
        rows = Placement.objects.only("pk", source).order_by("pk")
        for start in range(0, rows.count(), BATCH):
            batch = list(rows[start : start + BATCH])
            for row in batch:
                setattr(row, target, getattr(row, source) or {})
            Placement.objects.bulk_update(batch, [target])

    return copy


class Migration(migrations.Migration):
    dependencies = [("placement", "0005_rollout_objects")]

    operations = [
        migrations.AddField(
            model_name="placement",
            name="packed_explanation",
            field=core.fields.CompressedJSONField(blank=True, default=dict),
        ),
        migrations.RunPython(
            copy_explanation("explanation", "packed_explanation"),
            copy_explanation("packed_explanation", "explanation"),
        ),
        migrations.RemoveField(model_name="placement", name="explanation"),
        migrations.RenameField(model_name="placement", old_name="packed_explanation", new_name="explanation"),
    ]
