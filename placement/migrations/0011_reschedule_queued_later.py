"""A queued reschedule records whether it was queued behind the others (a change that cannot alter the
placement's decisions), so a change that can queues a run of its own ahead of them."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("placement", "0010_cluster_record"),
    ]

    operations = [
        migrations.AddField(
            model_name="placement",
            name="reschedule_queued_later",
            field=models.BooleanField(default=False),
        ),
    ]
