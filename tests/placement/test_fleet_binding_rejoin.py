"""A cluster a PickFixed CRP drops and lists again gets its Unscheduled binding back in the state it had
before, as KubeFleet's scheduler does: it keeps that state in the binding's
`kubernetes-fleet.io/previous-binding-state` annotation, which therefore must survive being stored."""

import pytest

from placement import service
from placement.models import ClusterResourceBinding
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    CANARY,
    PROD,
    checkout_fixture,
    crp_spec,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
)

pytestmark = pytest.mark.django_db

PREVIOUS = "kubernetes-fleet.io/previous-binding-state"


def _on_hub(fleet_hub, name: str) -> dict[str, str]:
    """The annotations of the hub's copy of a binding."""
    return fleet_hub.store.get("ClusterResourceBinding", name)["metadata"].get("annotations") or {}


def test_a_dropped_cluster_listed_again_gets_its_binding_back(fleet_hub, checkout, editor) -> None:
    dropped = PROD[2]
    before = ClusterResourceBinding.objects.get(placement=checkout, spec__targetCluster=dropped)

    service.apply_spec(checkout, crp_spec([*CANARY, *PROD[:2]]), actor=editor)
    unscheduled = ClusterResourceBinding.objects.get(pk=before.pk)
    assert unscheduled.spec["state"] == "Unscheduled"
    assert unscheduled.annotations == {PREVIOUS: before.spec["state"]}
    assert _on_hub(fleet_hub, before.name) == {PREVIOUS: before.spec["state"]}

    service.apply_spec(checkout, crp_spec(), actor=editor)
    checkout.refresh_from_db()
    assert "error" not in checkout.explanation
    again = ClusterResourceBinding.objects.get(pk=before.pk)
    assert again.spec["state"] == before.spec["state"]
    assert dropped in checkout.family.current_selection(checkout)
    assert again.annotations == {} and PREVIOUS not in _on_hub(fleet_hub, before.name)
