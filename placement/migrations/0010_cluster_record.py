"""A placement keeps what its last run computed per cluster as packed arrays (`cluster_record`) beside the
explanation, which no longer lists the clusters. Existing explanations keep their `clusters` until the
next reschedule rewrites them; readers accept both."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("placement", "0009_hub_change_entries"),
    ]

    operations = [
        migrations.AddField(
            model_name="placement",
            name="cluster_record",
            field=models.BinaryField(blank=True, default=b""),
        ),
    ]
