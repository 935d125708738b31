from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("placement", "0007_run_claims_errors_history_keys"),
    ]

    operations = [
        migrations.AddField(
            model_name="placement",
            name="reschedule_pending_since",
            field=models.DateTimeField(blank=True, db_index=True, null=True),
        ),
        migrations.AddField(
            model_name="placement",
            name="reschedule_pending_trigger",
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
