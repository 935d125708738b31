"""A hub may hold label selectors apimachinery cannot convert (the CRD schema checks only their types).

The sync stores such objects like any other; scheduling then reports them as upstream does: a Placement
predicate as PlacementMisconfigured, a LabelSelector ManagedClusterSet as the reconcile's error.
"""

import pytest

from demohub import DemoHub
from inventory.models import Hub, ManagedClusterSet, RejectedObject, SyncRun
from inventory.sync import sync_hub
from placement import service
from placement.models import Placement
from tests.factories import synced_demo_hub_row

pytestmark = pytest.mark.django_db

API = "cluster.open-cluster-management.io"
FOO = {"matchExpressions": [{"key": "env", "operator": "Foo"}]}


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def _placement(name: str, **spec: object) -> dict:
    return {
        "apiVersion": f"{API}/v1beta1",
        "kind": "Placement",
        "metadata": {"name": name, "namespace": "apps-dev"},
        "spec": spec,
    }


def _explained(hub: Hub, name: str) -> dict:
    placement = Placement.objects.get(hub=hub, kind="Placement", namespace="apps-dev", name=name)
    service.reschedule(placement, trigger="test")
    placement.refresh_from_db()
    return placement.explanation


def test_a_placement_with_a_selector_that_does_not_convert_is_stored_and_misconfigured(demo_hub, hub) -> None:
    demo_hub.store.create(_placement("odd", predicates=[{"requiredClusterSelector": {"labelSelector": FOO}}]))

    run = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    assert run.state == SyncRun.State.SUCCEEDED and not RejectedObject.objects.exists()
    conditions = {c["type"]: c for c in _explained(hub, "odd")["conditions"]}
    misconfigured = conditions["PlacementMisconfigured"]
    assert (misconfigured["status"], misconfigured["reason"]) == ("True", "Misconfigured")
    assert misconfigured["message"] == 'Predicate:"Foo" is not a valid label selector operator'


def test_a_cluster_set_with_a_selector_that_does_not_convert_fails_its_placements(demo_hub, hub) -> None:
    selector = {"selectorType": "LabelSelector", "labelSelector": FOO}
    demo_hub.store.create(
        {
            "apiVersion": f"{API}/v1beta2",
            "kind": "ManagedClusterSet",
            "metadata": {"name": "odd"},
            "spec": {"clusterSelector": selector},
        }
    )
    binding = {"name": "odd", "namespace": "apps-dev"}
    demo_hub.store.create(
        {
            "apiVersion": f"{API}/v1beta2",
            "kind": "ManagedClusterSetBinding",
            "metadata": binding,
            "spec": {"clusterSet": "odd"},
        }
    )
    demo_hub.store.create(_placement("on-odd", clusterSets=["odd"]))

    run = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    assert run.state == SyncRun.State.SUCCEEDED and not RejectedObject.objects.exists()
    assert ManagedClusterSet.objects.get(hub=hub, name="odd").label_selector == FOO
    assert _explained(hub, "on-odd")["error"] == (
        'failed to get clusterset: odd, clusters, Error: "Foo" is not a valid label selector operator'
    )
