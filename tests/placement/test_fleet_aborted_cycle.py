"""A ClusterResourcePlacement whose scheduling cycle aborts keeps what the cycle wrote before the failing
step, as KubeFleet's scheduler does: a binding to a cluster that left is marked Unscheduled, and the
error is the run's explanation."""

import pytest

from placement import service
from placement.models import ClusterResourceBinding, Owner
from tests.factories import ClusterResourceBindingFactory
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    PROD,
    checkout_fixture,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
)

pytestmark = pytest.mark.django_db

PREVIOUS = "kubernetes-fleet.io/previous-binding-state"


def _lost_previous_state(checkout, cluster: str) -> None:
    """The listed cluster's binding is Unscheduled without the annotation saying what it was: picking
    the cluster again aborts the cycle."""
    row = ClusterResourceBinding.objects.get(placement=checkout, spec__targetCluster=cluster)
    row.spec, row.annotations = {**row.spec, "state": "Unscheduled"}, {}
    row.save()


def _bindings(checkout) -> dict[str, tuple[str, dict[str, str]]]:
    rows = ClusterResourceBinding.objects.filter(placement=checkout, owner=Owner.DASHBOARD)
    return {row.spec["targetCluster"]: (row.spec["state"], row.annotations) for row in rows}


def test_a_binding_to_a_cluster_that_left_is_unscheduled_when_the_cycle_aborts(checkout) -> None:
    labels = {"kubernetes-fleet.io/parent-CRP": checkout.name}
    ClusterResourceBindingFactory(
        placement=checkout, owner=Owner.DASHBOARD, labels=labels, target="gone", state="Bound"
    )
    _lost_previous_state(checkout, PROD[0])

    change = service.reschedule(checkout, trigger="test")

    checkout.refresh_from_db()
    assert _bindings(checkout)["gone"] == ("Unscheduled", {PREVIOUS: "Bound"})
    assert checkout.explanation["error"].startswith("framework: failed to find the previous state")
    assert change is not None and change.removed == ["gone"]


def test_an_aborted_cycle_that_writes_nothing_new_stores_only_its_error(checkout) -> None:
    _lost_previous_state(checkout, PROD[0])
    stored = _bindings(checkout)

    assert service.reschedule(checkout, trigger="test") is None

    checkout.refresh_from_db()
    assert _bindings(checkout) == stored
    assert checkout.explanation["error"].startswith("framework: failed to find the previous state")
