"""`inventory.bulk.insert` stores new rows from their field values as `save` would (COPY on PostgreSQL,
bulk_create elsewhere): it answers their pks in order, unset fields take their defaults, a foreign key
is given by instance or by id, None in a JSON field is SQL NULL, and fields that set themselves on save
(auto_now, auto_now_add) are set."""

import pytest
from django.utils import timezone

from inventory import bulk
from inventory.models import ManagedCluster, ManagedClusterSet
from placement.models import Placement
from tests.factories import HubFactory

pytestmark = pytest.mark.django_db


def test_rows_get_their_pks_values_and_defaults() -> None:
    hub = HubFactory()
    rows = [
        {
            # the hub by instance, then by id
            **({"hub": hub} if number % 2 else {"hub_id": hub.pk}),
            "kind": ManagedCluster.Kind.MEMBER_CLUSTER,
            "name": f"member-{number}",
            "labels": {"region": "eu", "quote": 'a "b" \\ c', "unicode": "é"},
            "conditions": [{"type": "Joined", "status": "True"}],
            "cpu_allocatable": 4.5,
            "stale": True,
        }
        for number in range(3)
    ]

    pks = bulk.insert(ManagedCluster, rows)

    stored = {row.pk: row for row in ManagedCluster.objects.filter(hub=hub)}
    assert sorted(stored) == sorted(pks)
    for pk, row in zip(pks, rows, strict=True):
        found = stored[pk]
        assert (found.kind, found.name, found.labels, found.conditions) == (
            "MemberCluster",
            row["name"],
            row["labels"],
            row["conditions"],
        )
        assert (found.cpu_allocatable, found.memory_allocatable, found.stale) == (4.5, None, True)
        # fields left unset hold their defaults
        assert (found.claims, found.properties, found.availability) == ([], {}, "Unknown")


def test_none_in_a_json_field_is_sql_null() -> None:
    hub = HubFactory()
    rows = [
        {"hub": hub, "name": "all", "label_selector": {}},
        {"hub": hub, "name": "nothing", "label_selector": None},
    ]

    bulk.insert(ManagedClusterSet, rows)

    assert list(
        ManagedClusterSet.objects.filter(label_selector__isnull=True).values_list("name", flat=True)
    ) == ["nothing"]
    assert ManagedClusterSet.objects.get(name="all").label_selector == {}


def test_fields_that_set_themselves_on_save_are_set() -> None:
    before = timezone.now()
    hub = HubFactory()
    row = {"hub": hub, "kind": Placement.Kind.PLACEMENT, "namespace": "apps", "name": "web", "spec": {}}

    (pk,) = bulk.insert(Placement, [row])

    stored = Placement.objects.get(pk=pk)
    assert stored.created >= before and stored.updated >= before
