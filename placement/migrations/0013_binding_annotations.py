"""A ClusterResourceBinding keeps its annotations: the scheduler records an Unscheduled binding's earlier
state in one (kubernetes-fleet.io/previous-binding-state) and restores it when the cluster is picked again."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('placement', '0012_run_digest_external_storage'),
    ]

    operations = [
        migrations.AddField(
            model_name='clusterresourcebinding',
            name='annotations',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
