"""`inventory.bulk.update` writes the named fields of rows by pk from their values (on PostgreSQL COPY
into a temporary table and one UPDATE from a few rows, executemany otherwise): other fields and other rows
stay as they were, JSON keeps quotes and unicode, None in a JSON field is SQL NULL, and it can run twice
in a transaction."""

import pytest
from django.db import transaction
from django.utils import timezone

from inventory import bulk
from inventory.models import ManagedCluster, ManagedClusterSet
from tests.factories import HubFactory, ManagedClusterFactory

pytestmark = pytest.mark.django_db


# both ways of writing the few rows of a test: COPY and one UPDATE (on PostgreSQL), and executemany
@pytest.fixture(params=[1, bulk.COPY_UPDATE_MIN], ids=["copy", "executemany"])
def copy_from(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk, "COPY_UPDATE_MIN", request.param)


@pytest.mark.usefixtures("copy_from")
def test_the_named_fields_of_the_rows_given_are_written() -> None:
    hub = HubFactory()
    clusters = [
        ManagedClusterFactory(hub=hub, name=f"c{number}", labels={"n": str(number)}, resource_version="1")
        for number in range(3)
    ]
    moment = timezone.now()
    agents = [
        {"type": "MemberAgent", "note": 'a "b" \\ c é', "lastReceivedHeartbeat": "2026-11-25T12:00:00Z"}
    ]

    with transaction.atomic():
        bulk.update(
            ManagedCluster,
            ["agent_status", "resource_version", "synced_at"],
            [(clusters[0].pk, [agents, "2", moment]), (clusters[2].pk, [[], "3", moment])],
        )
        bulk.update(ManagedCluster, ["stale"], [(clusters[1].pk, [True])])

    stored = {row.name: row for row in ManagedCluster.objects.filter(hub=hub)}
    assert (stored["c0"].agent_status, stored["c0"].resource_version, stored["c0"].synced_at) == (
        agents,
        "2",
        moment,
    )
    assert (stored["c2"].agent_status, stored["c2"].resource_version) == ([], "3")
    # the rows not given, and the fields not named, are as they were
    assert (stored["c1"].resource_version, stored["c1"].stale) == ("1", True)
    assert [stored[name].labels for name in ("c0", "c1", "c2")] == [{"n": "0"}, {"n": "1"}, {"n": "2"}]
    assert not stored["c1"].agent_status


@pytest.mark.usefixtures("copy_from")
def test_none_in_a_json_field_is_sql_null() -> None:
    hub = HubFactory()
    cluster_set = ManagedClusterSet.objects.create(hub=hub, name="all", label_selector={"matchLabels": {}})

    bulk.update(ManagedClusterSet, ["label_selector"], [(cluster_set.pk, [None])])

    assert ManagedClusterSet.objects.filter(pk=cluster_set.pk, label_selector__isnull=True).exists()
