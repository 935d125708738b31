"""Explaining a cluster the Predicate filter removed reuses the filter's CEL verdicts."""

import pytest

from placement.scheduler.ocm.cel import CelSelector
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.schedule import schedule_placement
from placement.scheduler.ocm.types import ManagedClusterSetBinding
from tests.scheduler.ocm.builders import NOW, cluster, cluster_set, placement


def test_cel_runs_once_per_projection_for_filter_and_explanation(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = CelSelector.matches

    def counting(self, cluster_object, scores):  # type: ignore[no-untyped-def]
        calls.append(cluster_object["metadata"]["name"])
        return original(self, cluster_object, scores)

    monkeypatch.setattr(CelSelector, "matches", counting)
    inventory = OcmInventory(
        [
            cluster(f"c{i}", labels={"cluster.open-cluster-management.io/clusterset": "prod", "env": env})
            for i, env in enumerate(["prod", "dev", "dev"])
        ],
        [cluster_set("prod")],
        [ManagedClusterSetBinding("apps", "prod", "prod")],
    )
    web = placement(
        predicates=[
            {
                "requiredClusterSelector": {
                    "celSelector": {"celExpressions": ['managedCluster.metadata.labels["env"] == "prod"']}
                }
            }
        ]
    )
    result = schedule_placement(web, inventory, NOW)
    report = result.to_report()
    assert result.selected == ["c0"]
    assert all("celSelector" in c["filteredBy"] for c in report["clusters"] if c["name"] != "c0")
    # c2 reads as c1 does (env=dev), so it shares c1's evaluation; explaining either runs nothing more
    assert sorted(calls) == ["c0", "c1"]
