"""The change hook: receivers of `hub_changed` hear what a sync changed, and placement works out from it
which placements the trigger chain re-queues."""

import pytest

from demohub import DemoHub
from inventory import changes
from inventory.models import Hub, SyncRun
from inventory.signals import hub_changed
from inventory.sync import sync_hub
from placement.models import Placement
from placement.requeue import requeued
from tests.factories import synced_demo_hub_row

pytestmark = pytest.mark.django_db
OCM, CRP = Placement.Kind.PLACEMENT.value, Placement.Kind.CLUSTER_RESOURCE_PLACEMENT.value
CLUSTER = "aks-northeurope-dev-021"  # seed 7: sets development, global, europe, gpu-clusters, azure
SET_LABEL = "cluster.open-cluster-management.io/clusterset"


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def test_a_cluster_moving_sets_requeues_placements_of_old_and_new_sets(demo_hub, hub, heard) -> None:
    demo_hub.store.patch("ManagedCluster", CLUSTER, {"metadata": {"labels": {SET_LABEL: "staging"}}})

    sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    (hub_changes,) = heard
    (change,) = hub_changes.clusters
    assert change.old.labels[SET_LABEL] == "development" and change.new.labels[SET_LABEL] == "staging"
    # development/staging -> apps-dev/dev-sandbox; global, europe -> argocd/guestbook; gpu -> gpu-training
    assert requeued(hub_changes).placements == {
        (OCM, "apps-dev", "dev-sandbox"),
        (OCM, "argocd", "guestbook"),
        (OCM, "apps-prod", "gpu-training"),
    }


def test_an_add_on_score_requeues_placements_weighting_it(demo_hub, hub, heard) -> None:
    demo_hub.store.patch(
        "AddOnPlacementScore",
        "resource-usage-score",
        {"status": {"scores": [{"name": "cpuAvailable", "value": 1}]}},
        namespace=CLUSTER,
        subresource="status",
    )

    sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    (hub_changes,) = heard
    assert [c.new.namespace for c in hub_changes.add_on_scores] == [CLUSTER]
    assert requeued(hub_changes).placements == {(OCM, "apps-prod", "web-frontend")}


def test_a_deleted_binding_requeues_its_namespace_placements(demo_hub, hub, heard) -> None:
    demo_hub.store.delete("ManagedClusterSetBinding", "staging", namespace="apps-dev")

    sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    (hub_changes,) = heard
    assert [(c.old.namespace, c.old.name, c.new) for c in hub_changes.bindings] == [
        ("apps-dev", "staging", None)
    ]
    assert requeued(hub_changes).placements == {(OCM, "apps-dev", "dev-sandbox")}


def test_a_member_cluster_change_requeues_every_cluster_resource_placement(demo_hub, hub, heard) -> None:
    member = demo_hub.store.names("MemberCluster")[0]
    demo_hub.store.patch("MemberCluster", member, {"metadata": {"labels": {"tier": "gold"}}})

    sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    (hub_changes,) = heard
    assert [c.new.labels["tier"] for c in hub_changes.member_clusters] == ["gold"]
    crps = demo_hub.store.names("ClusterResourcePlacement")
    assert requeued(hub_changes).placements == {(CRP, "", name) for name in crps}


def test_nothing_changed_notifies_nobody_and_a_failing_listener_stops_nothing(hub, heard) -> None:
    def broken(hub_changes: changes.HubChanges, **_: object) -> None:
        raise RuntimeError("listener bug")

    hub_changed.connect(broken)
    sent = changes.HubChanges(hub.pk, clusters=[changes.Change(None, None)])
    try:
        assert sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC).state == SyncRun.State.SUCCEEDED
        assert heard == []
        changes.notify(sent)
    finally:
        hub_changed.disconnect(broken)
    assert heard == [sent]
