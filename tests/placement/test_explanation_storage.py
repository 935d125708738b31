"""The stored explanation is JSON kept zlib-compressed (core.fields.CompressedJSONField): it reads back
as it was written, takes a fraction of its JSON size, and migration 0006 carries existing rows over."""

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from placement.models import Placement
from tests.factories import PlacementFactory

EXPLANATION = {
    "clusters": {"name": [f"cluster-{i:05d}" for i in range(2000)], "total": list(range(2000))},
    "outside": {"count": 3, "sets": ["edge"]},
    "weights": {"Balance": 1},
}


def test_an_explanation_reads_back_as_written_and_is_stored_compressed(db: None) -> None:
    placement = PlacementFactory(explanation=EXPLANATION)
    assert Placement.objects.get(pk=placement.pk).explanation == EXPLANATION
    with connection.cursor() as cursor:
        cursor.execute("SELECT explanation FROM placement_placement WHERE id = %s", [placement.pk])
        stored = bytes(cursor.fetchone()[0])
    assert len(stored) < len(json.dumps(EXPLANATION)) / 4
    Placement.objects.filter(pk=placement.pk).update(explanation={})
    assert Placement.objects.get(pk=placement.pk).explanation == {}
    assert Placement.objects.defer("explanation").get(pk=placement.pk).explanation == {}


@pytest.mark.django_db(transaction=True)
def test_migration_0006_carries_existing_explanations_over_and_back() -> None:
    before, after = [("placement", "0005_rollout_objects")], [("placement", "0006_explanation_compressed")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    hub = old.get_model("inventory", "Hub").objects.create(name="east", server_url="https://east:6443")
    row = old.get_model("placement", "Placement").objects.create(
        hub=hub, kind="Placement", namespace="web", name="shop", explanation=EXPLANATION
    )

    executor = MigrationExecutor(connection)
    executor.migrate(after)
    # the model as of 0006: later migrations add columns the current model would read
    compressed = executor.loader.project_state(after).apps.get_model("placement", "Placement")
    assert compressed.objects.get(pk=row.pk).explanation == EXPLANATION

    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    assert old.get_model("placement", "Placement").objects.get(pk=row.pk).explanation == EXPLANATION
    MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
