"""`requeueAfterSeconds` of a Fleet report: what the last scheduling cycle asks of the queue.

KubeFleet's scheduling framework never asks for a delayed requeue: its only requeue is an immediate one
after a batch-limited PickN cycle (topology spread), and our scheduler runs those cycles itself. Bindings
waiting out the rollout's unavailable period are the rollout controller's to requeue, not the scheduler's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from placement.scheduler.documents import Document
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import PlacementPolicy, TopologySpreadConstraint
from placement.scheduler.offline import run_offline
from placement.scheduler.timeutil import parse_time
from tests.scheduler.fleet.builders import NOW, binding, member, placement

REGRESSIONS = Path(__file__).parents[2] / "vectors" / "regressions" / "fleet-requeue.json"


def _report(vector: dict[str, Any]) -> dict[str, Any]:
    documents = [Document(vector["id"], number, body) for number, body in enumerate(vector["manifests"], 1)]
    now = parse_time(vector["now"])
    assert now is not None
    (report,) = run_offline(documents, now).reports
    return report


def test_unscheduled_bindings_in_their_unavailable_period_ask_for_no_requeue() -> None:
    (vector,) = json.loads(REGRESSIONS.read_text())["vectors"]
    (expected,) = vector["expected"]["placements"]

    report = _report(vector)

    assert report["requeueAfterSeconds"] is None and expected["requeueAfterSeconds"] is None
    # nothing to schedule: two bindings are bound under the current policy, the unscheduled ones stay so
    assert report["bindings"] == []
    assert [(c["type"], c["status"], c["reason"]) for c in report["conditions"]] == [
        (c["type"], c["status"], c["reason"]) for c in expected["conditions"]
    ]
    assert [(d["clusterName"], d["selected"]) for d in report["decisions"]] == [
        (d["clusterName"], d["selected"]) for d in expected["decisions"]
    ]


def test_topology_spread_batches_are_run_here_so_the_last_cycle_asks_for_nothing() -> None:
    inventory = FleetInventory(member(f"m{i}", {"zone": f"z{i % 2}"}) for i in range(4))
    spread = TopologySpreadConstraint(max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule")
    policy = PlacementPolicy("PickN", number_of_clusters=3, topology_spread_constraints=(spread,))

    result = schedule_crp(placement(policy), inventory, [binding("m0")], NOW)

    assert result.cycles == 2 and len(result.selected) == 3
    assert result.to_report()["requeueAfterSeconds"] is None


def test_an_aborted_cycle_asks_for_no_delay() -> None:
    vector = {
        "id": "aborted",
        "now": "2024-05-01T12:00:00Z",
        "manifests": [
            {
                "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                "kind": "ClusterResourcePlacement",
                "metadata": {"name": "web"},
                "spec": {
                    "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
                    "policy": {
                        "placementType": "PickAll",
                        "affinity": {
                            "clusterAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "clusterSelectorTerms": [
                                        {
                                            "labelSelector": {
                                                "matchExpressions": [{"key": "a", "operator": "Foo"}]
                                            }
                                        }
                                    ]
                                }
                            }
                        },
                    },
                },
            },
            {
                "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
                "kind": "MemberCluster",
                "metadata": {"name": "m1"},
            },
        ],
    }

    report = _report(vector)

    assert report["error"] and report["requeueAfterSeconds"] is None
