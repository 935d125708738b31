from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('placement', '0003_adopt_hubless_rows'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='placement',
            name='hub',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='placements', to='inventory.hub'),
        ),
        migrations.AddConstraint(
            model_name='clusterresourcebinding',
            constraint=models.UniqueConstraint(condition=models.Q(('owner', 'hub')), fields=('hub', 'name'), name='clusterresourcebinding_unique_hub_name'),
        ),
        migrations.AddConstraint(
            model_name='clusterresourcebinding',
            constraint=models.UniqueConstraint(condition=models.Q(('owner', 'dashboard')), fields=('placement', 'name'), name='clusterresourcebinding_unique_owned_name'),
        ),
        migrations.AddConstraint(
            model_name='placementdecision',
            constraint=models.UniqueConstraint(condition=models.Q(('owner', 'hub')), fields=('hub', 'namespace', 'name'), name='placementdecision_unique_hub_ns_name'),
        ),
        migrations.AddConstraint(
            model_name='placementdecision',
            constraint=models.UniqueConstraint(condition=models.Q(('owner', 'dashboard')), fields=('placement', 'name'), name='placementdecision_unique_owned_name'),
        ),
        migrations.AddField(
            model_name='decisionchange',
            name='actor',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='decisionchange',
            name='placement',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='history', to='placement.placement'),
        ),
        migrations.AddField(
            model_name='placementevent',
            name='placement',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='placement.placement'),
        ),
        migrations.AddIndex(
            model_name='decisionchange',
            index=models.Index(fields=['placement', '-at'], name='placement_d_placeme_01ea39_idx'),
        ),
        migrations.AddIndex(
            model_name='placementevent',
            index=models.Index(fields=['placement', '-at'], name='placement_p_placeme_072c4a_idx'),
        ),
    ]
