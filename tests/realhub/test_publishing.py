"""Publishing a dashboard-owned Placement's decisions to the real hub (`placement.publishing`), as the
least-privilege ServiceAccount: PlacementDecisions created in the publish namespace and admitted by the
upstream CRD schema, their decisions written through the status subresource, labelled as the upstream
controller labels them (Argo CD selects by them); a change of decisions updates them, a decision no
longer wanted is deleted, and a conditional write that meets another writer's change (409 Conflict
from the real server) is applied again to the fresh copy."""

from __future__ import annotations

import kubernetes
import pytest
from django.contrib.auth.models import User

from inventory.hubclient import HubClient
from inventory.hubwrites import update_with_retry
from inventory.models import Hub
from inventory.sync import sync_hub
from placement import publishing, service
from placement.models import Owner, Placement, PlacementDecision
from placement.scheduler.ocm.decisions import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
)
from tests.factories import placement_role
from tests.realhub import objects
from tests.realhub.conftest import managed_cluster
from tests.realhub.hub import RealHub

pytestmark = [pytest.mark.realhub, pytest.mark.django_db]

NAMESPACE = "default"  # the registered hub's publish namespace, and the placement's
CANARY = {"canary": "true"}
GROUPED = {
    "clusterSets": ["global"],
    "numberOfClusters": 4,
    "decisionStrategy": {
        "groupStrategy": {
            "decisionGroups": [
                {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": CANARY}}}
            ]
        }
    },
}


@pytest.fixture
def editor(empty_hub: RealHub, hub_client: kubernetes.client.ApiClient, registered_hub: Hub) -> User:
    """Six clusters (two canaries) in a set `global` bound to the publish namespace, synced; the admin
    of that set and namespace."""
    objects.create(
        hub_client,
        {
            **objects.cluster_set("global"),
            "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}},
        },
    )
    objects.create(hub_client, objects.set_binding(NAMESPACE, "global"))
    for index in range(6):
        cluster = managed_cluster(f"c-{index}")
        cluster["metadata"]["labels"] |= CANARY if index < 2 else {}
        objects.create(hub_client, cluster)
    sync_hub(registered_hub, trigger="command")
    return placement_role(registered_hub, (NAMESPACE,), username="editor")


def published(client: kubernetes.client.ApiClient) -> dict[str, dict[str, object]]:
    """The PlacementDecisions of placement `shop` on the hub, by name: labels and status."""
    listed = kubernetes.client.CustomObjectsApi(client).list_namespaced_custom_object(
        "cluster.open-cluster-management.io",
        "v1beta1",
        NAMESPACE,
        "placementdecisions",
        label_selector=f"{PLACEMENT_LABEL}=shop",
    )
    return {
        item["metadata"]["name"]: {"labels": item["metadata"]["labels"], "status": item.get("status")}
        for item in listed["items"]
    }


def desired(placement: Placement) -> dict[str, dict[str, object]]:
    return {
        obj["metadata"]["name"]: {"labels": obj["metadata"]["labels"], "status": obj["status"]}
        for obj in publishing.desired_objects(placement)
    }


def shop(hub: Hub, editor: User) -> Placement:
    """The dashboard-owned placement both tests publish: two decision groups over the synced clusters."""
    return service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace=NAMESPACE, name="shop", spec=GROUPED, actor=editor
    )


def test_decisions_are_published_updated_and_deleted_on_the_real_hub(
    registered_hub: Hub, editor: User, hub_client: kubernetes.client.ApiClient
) -> None:
    placement = shop(registered_hub, editor)

    # published by the follow-up of the schedule: one object per decision group, admitted by the schema
    on_hub = published(hub_client)
    assert on_hub == desired(placement) and sorted(on_hub) == ["shop-decision-1", "shop-decision-2"]
    canary = on_hub["shop-decision-1"]
    assert canary["labels"] == {
        PLACEMENT_LABEL: "shop",
        DECISION_GROUP_NAME_LABEL: "canary",
        DECISION_GROUP_INDEX_LABEL: "0",
        **publishing.MANAGED,
    }
    assert canary["status"] == {"decisions": [{"clusterName": name, "reason": ""} for name in ("c-0", "c-1")]}
    assert on_hub["shop-decision-2"]["labels"][DECISION_GROUP_INDEX_LABEL] == "1"
    # nothing to do when the hub holds the decisions already
    assert publishing.publish_placement(placement).counts() == {
        "created": 0,
        "updated": 0,
        "deleted": 0,
        "conflicts": 0,
    }

    service.apply_spec(placement, {**GROUPED, "numberOfClusters": 5, "decisionStrategy": {}}, actor=editor)

    # one group now: the first object holds every decision, the second one is deleted; as upstream's
    # bind does, the labels of an object whose decisions changed wait for the next reconcile
    on_hub = published(hub_client)
    assert on_hub == desired(placement) and sorted(on_hub) == ["shop-decision-1"]
    assert len(on_hub["shop-decision-1"]["status"]["decisions"]) == 5
    service.reschedule(placement, trigger="resync")
    on_hub = published(hub_client)
    assert on_hub == desired(placement)
    assert on_hub["shop-decision-1"]["labels"][DECISION_GROUP_NAME_LABEL] == ""
    # the published copies are the dashboard's: a sync does not mirror them back as the hub's
    sync_hub(registered_hub, trigger="command")
    assert not PlacementDecision.objects.filter(hub=registered_hub, owner=Owner.HUB).exists()


def test_a_decision_written_meanwhile_is_a_409_and_written_again_on_the_fresh_copy(
    registered_hub: Hub, editor: User, hub_client: kubernetes.client.ApiClient
) -> None:
    placement = shop(registered_hub, editor)
    wanted = {"decisions": [{"clusterName": "c-5", "reason": "pinned"}]}
    with HubClient(registered_hub) as client:
        [stale] = client.list_placement_decisions(
            NAMESPACE, f"{PLACEMENT_LABEL}=shop,{DECISION_GROUP_NAME_LABEL}=canary"
        )
        # another writer changes the object after the dashboard read it
        objects.patch(
            hub_client,
            "PlacementDecision",
            stale["metadata"]["name"],
            {"metadata": {"annotations": {"by": "other"}}},
            NAMESPACE,
        )

        written = update_with_retry(
            client,
            "PlacementDecision",
            stale["metadata"]["name"],
            lambda obj: None if obj.get("status") == wanted else {"status": wanted},
            namespace=NAMESPACE,
            subresource="status",
            current=stale,
        )

    assert written.written and written.conflicts == 1
    assert written.obj["status"] == wanted and written.obj["metadata"]["annotations"] == {"by": "other"}
    # publishing puts the placement's own decisions back
    assert publishing.publish_placement(placement).updated == [stale["metadata"]["name"]]
    assert published(hub_client) == desired(placement)
