"""Dashboard-owned bindings on the hub, read back with the real `kubernetes` client."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from kubernetes import client

from demohub import DemoHub
from inventory.models import Hub
from inventory.sync import sync_hub
from placement import hubbindings
from placement.models import CRP_LABEL, ClusterResourceBinding, Owner
from tests.placement.rollout_hub import (
    MANAGED,
    create_crp,
    crp_spec,
    fleet_editor,
    fleet_hub,
    fleet_sim,
    hub_bindings,
    own_rows,
    settle,
)

pytestmark = pytest.mark.django_db
__all__ = ["fleet_editor", "fleet_hub", "fleet_sim"]  # fixtures, used by name
EXTERNAL = {**crp_spec(3), "strategy": {"type": "External"}}


@pytest.fixture
def api(fleet_sim: DemoHub) -> Iterator[client.CustomObjectsApi]:
    configuration = client.Configuration()
    configuration.host = fleet_sim.url
    with client.ApiClient(configuration) as api_client:
        yield client.CustomObjectsApi(api_client)


def listed(api: client.CustomObjectsApi, selector: str) -> list[dict[str, Any]]:
    body = api.list_cluster_custom_object(
        "placement.kubernetes-fleet.io", "v1beta1", "clusterresourcebindings", label_selector=selector
    )
    return body["items"]


def test_bindings_are_written_with_the_parent_and_managed_by_labels_and_the_stored_spec(
    fleet_hub: Hub, api: client.CustomObjectsApi, editor: User
) -> None:
    crp = create_crp(fleet_hub, editor, EXTERNAL, name="batch")
    objects = listed(api, hubbindings.selector(crp))
    rows = {row.name: row for row in crp.bindings.filter(owner=Owner.DASHBOARD)}
    assert sorted(obj["metadata"]["name"] for obj in objects) == sorted(rows) and len(rows) == 3
    for obj in objects:
        assert obj["metadata"]["labels"] == {CRP_LABEL: "batch", **MANAGED}
        assert obj["spec"] == rows[obj["metadata"]["name"]].spec and obj["spec"]["state"] == "Scheduled"


def test_the_sync_does_not_mirror_them_back(fleet_hub: Hub, editor: User) -> None:
    crp = create_crp(fleet_hub, editor, EXTERNAL, name="batch")
    sync_hub(fleet_hub, trigger="command")
    names = list(crp.bindings.values_list("name", flat=True))
    assert not ClusterResourceBinding.objects.filter(hub=fleet_hub, owner=Owner.HUB, name__in=names).exists()
    # the hub's own bindings are still mirrored
    assert ClusterResourceBinding.objects.filter(hub=fleet_hub, owner=Owner.HUB).exists()


def test_status_is_read_back_into_the_rows(fleet_hub: Hub, fleet_sim: DemoHub, editor: User) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(2))
    settle(fleet_sim)
    objects = hubbindings.pull_binding_status(crp)
    for row in own_rows(crp).values():
        assert row.status == objects[row.name]["status"]
        conditions = {c["type"]: c for c in row.status["conditions"]}
        assert conditions["Available"]["status"] == "True"
        # the rollout's own condition, for the generation its spec write produced
        assert (
            conditions["RolloutStarted"]["observedGeneration"] == objects[row.name]["metadata"]["generation"]
        )


def test_leftovers_are_deleted_and_changed_specs_updated(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User
) -> None:
    crp = create_crp(fleet_hub, editor, EXTERNAL, name="batch")
    row = min(crp.bindings.all(), key=lambda r: r.name)
    leftover = {
        "apiVersion": hubbindings.API_VERSION,
        "kind": "ClusterResourceBinding",
        "metadata": {"name": "batch-gone", "labels": hubbindings.managed_labels(crp)},
        "spec": {"state": "Bound", "targetCluster": "gone"},
    }
    fleet_sim.store.create(leftover)
    row.spec = {**row.spec, "state": "Bound", "resourceSnapshotName": "batch-1-snapshot"}
    row.save(update_fields=["spec"])

    objects, report = hubbindings.sync_bindings(crp)
    assert report.deleted == ["batch-gone"] and report.updated == [row.name] and report.created == []
    assert objects[row.name]["spec"]["resourceSnapshotName"] == "batch-1-snapshot"
    assert "batch-gone" not in {
        o["metadata"]["name"] for o in fleet_sim.store.list("ClusterResourceBinding").items
    }

    # a key removed from the row is removed on the hub
    row.spec = {k: v for k, v in row.spec.items() if k != "resourceSnapshotName"}
    row.save(update_fields=["spec"])
    hubbindings.push_bindings(crp, [row])
    assert "resourceSnapshotName" not in hub_bindings(fleet_sim, crp)[row.spec["targetCluster"]]["spec"]


def test_delete_bindings_removes_rows_and_objects(fleet_hub: Hub, fleet_sim: DemoHub, editor: User) -> None:
    crp = create_crp(fleet_hub, editor, EXTERNAL, name="batch")
    name = crp.bindings.order_by("name").values_list("name", flat=True).first()
    fleet_sim.store.delete("ClusterResourceBinding", name)
    others = list(crp.bindings.exclude(name=name).values_list("name", flat=True))

    # already gone on the hub counts as done
    assert hubbindings.delete_bindings(crp, [name]) == []
    assert hubbindings.delete_bindings(crp, others[:1]) == others[:1]
    assert sorted(crp.bindings.values_list("name", flat=True)) == others[1:]
    assert len(hub_bindings(fleet_sim, crp)) == 1


def test_own_conditions_never_overwrite_a_status_the_hub_changed_meanwhile(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User
) -> None:
    """Another writer changes the status between our read and our write: 409, read again, both kept."""
    crp = create_crp(fleet_hub, editor, EXTERNAL, name="batch")
    row = crp.bindings.order_by("name").first()
    row.status = {"conditions": [{"type": "RolloutStarted", "status": "True", "reason": "RolloutStarted"}]}
    fleet_sim.conflict_next(1, kind="ClusterResourceBinding")

    report = hubbindings.push_bindings(crp, [row])

    assert report.conflicts == [row.name]
    types = [
        c["type"] for c in fleet_sim.store.get("ClusterResourceBinding", row.name)["status"]["conditions"]
    ]
    assert types == ["DemoConcurrentWriter", "RolloutStarted"]


def test_nothing_is_written_to_hubs_that_do_not_serve_fleet(fleet_hub: Hub, editor: User) -> None:
    crp = create_crp(fleet_hub, editor, EXTERNAL, name="batch")
    Hub.objects.filter(pk=fleet_hub.pk).update(serves_fleet=False)
    crp.hub.refresh_from_db()
    assert hubbindings.pull_binding_status(crp) == {}
    assert hubbindings.sync_bindings(crp)[1].counts() == {
        "created": 0,
        "updated": 0,
        "deleted": 0,
        "conflicts": 0,
    }


def test_the_writes_of_one_call_go_to_the_hub_in_parallel(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User
) -> None:
    """As upstream's rollout controller issues its binding updates: each write waits on the hub (here 50 ms
    of latency per request), so one after the other the hub would never serve two at once."""
    crp = create_crp(fleet_hub, editor, {**crp_spec(4), "strategy": {"type": "External"}}, name="batch")
    rows = list(crp.bindings.order_by("name"))
    for row in rows:
        row.spec = {**row.spec, "state": "Bound", "resourceSnapshotName": "batch-1-snapshot"}
    fleet_sim.faults.latency_ms = 50
    fleet_sim.reset_requests_in_flight()

    report = hubbindings.push_bindings(crp, rows)

    assert fleet_sim.peak_requests_in_flight >= 2
    assert report.updated == [row.name for row in rows]
    assert all(o["spec"]["state"] == "Bound" for o in hub_bindings(fleet_sim, crp).values())
    fleet_sim.reset_requests_in_flight()
    assert hubbindings.delete_bindings(crp, [row.name for row in rows]) == [row.name for row in rows]
    assert fleet_sim.peak_requests_in_flight >= 2
    assert hub_bindings(fleet_sim, crp) == {}
