"""Patched inventories equal inventories built from scratch: random sequences of cluster edits, adds and
deletes, set, binding and score changes are applied both ways, and every column the schedulers read and
the schedules of a few placements (OCM with CEL, taints and add-on scores; Fleet) are compared."""

from __future__ import annotations

import math
import random
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.manifests import parse_cluster_resource_placement
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import MemberCluster
from placement.scheduler.fleet.types import Taint as FleetTaint
from placement.scheduler.labels import parse_label_selector
from placement.scheduler.ocm.clustersets import ClusterSetSelectorError
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.schedule import schedule_placement
from placement.scheduler.ocm.types import CLUSTER_SET_LABEL, ManagedCluster, ManagedClusterSet
from placement.scheduler.taint_rows import TaintRows
from tests.scheduler.fleet import builders as fleet
from tests.scheduler.ocm.builders import NOW, binding, cluster, cluster_set, decision, placement, score

NAMES = [f"c{i:02d}" for i in range(24)]
SETS = {
    "prod": cluster_set("prod"),
    "dev": cluster_set("dev", "LabelSelector", {"matchLabels": {"env": "dev"}}),
    "any": cluster_set(
        "any", "LabelSelector", {"matchExpressions": [{"key": "region", "operator": "Exists"}]}
    ),
}
CEL = {"celSelector": {"celExpressions": ['managedCluster.metadata.labels["env"] != "test"']}}
PLACEMENTS = [
    placement(
        "web",
        clusterSets=["prod", "dev"],
        numberOfClusters=4,
        predicates=[{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"region": "east"}}}}],
        tolerations=[{"key": "gpu", "operator": "Exists"}],
        prioritizerPolicy={
            "mode": "Exact",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}, "weight": 2},
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}},
            ],
        },
    ),
    placement(
        "cel",
        predicates=[{"requiredClusterSelector": CEL}],
        prioritizerPolicy={
            "mode": "Additive",
            "configurations": [
                {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "load", "scoreName": "cpu"}}}
            ],
        },
        numberOfClusters=3,
    ),
    placement(
        "claims",
        predicates=[
            {
                "requiredClusterSelector": {
                    "claimSelector": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                    }
                }
            }
        ],
    ),
]


def _ocm_cluster(rng: random.Random, name: str) -> ManagedCluster:
    labels = {"env": rng.choice(["prod", "dev", "test"])}
    if rng.random() < 0.7:
        labels["region"] = rng.choice(["east", "west"])
    if rng.random() < 0.6:
        labels[CLUSTER_SET_LABEL] = rng.choice(["prod", "dev"])
    taints = [
        {
            "key": key,
            "value": rng.choice(["", "x"]),
            "effect": rng.choice(["NoSelect", "PreferNoSelect"]),
            "timeAdded": (NOW - timedelta(minutes=rng.randrange(100))).isoformat().replace("+00:00", "Z"),
        }
        for key in rng.sample(["gpu", "maintenance", "spot"], rng.randrange(3))
    ]
    fields: dict[str, Any] = {"taints": taints, "claims": {"zone": rng.choice(["a", "b"])}}
    if rng.random() < 0.8:
        fields["allocatable"] = {"cpu": str(rng.randrange(1, 64)), "memory": f"{rng.randrange(1, 9)}Gi"}
        fields["capacity"] = {"cpu": "64", "memory": "16Gi"}
    if rng.random() < 0.1:
        fields["deletion_timestamp"] = "2021-12-31T00:00:00Z"
    return cluster(name, labels=labels, **fields)


def _member(rng: random.Random, name: str) -> MemberCluster:
    taints = tuple(
        FleetTaint(key, rng.choice(["", "x"]), "NoSchedule")
        for key in rng.sample(["gpu", "spot"], rng.randrange(3))
    )
    # racks are few per value: a removal or an edit often takes a domain away from topology spread
    labels = {"region": rng.choice(["east", "west", "north"]), "rack": f"r{rng.randrange(12)}"}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(["gold", "silver"])
    return fleet.member(
        name,
        labels,
        properties={"kubernetes-fleet.io/node-count": str(rng.randrange(1, 30))},
        taints=taints,
        heartbeat=fleet.NOW - timedelta(minutes=rng.choice([0, 1, 9])),
        healthy=rng.choice(["True", "True", "False"]),
        healthy_since=fleet.NOW - timedelta(minutes=rng.choice([1, 20])),
    )


CRPS = [
    parse_cluster_resource_placement(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": name},
            "spec": {
                "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
                "policy": policy,
            },
        },
        lambda _message: None,
    )
    for name, policy in (
        (
            "pick",
            {
                "placementType": "PickN",
                "numberOfClusters": 3,
                "affinity": {
                    "clusterAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 10,
                                "preference": {
                                    "labelSelector": {"matchLabels": {"tier": "gold"}},
                                    "propertySorter": {
                                        "name": "kubernetes-fleet.io/node-count",
                                        "sortOrder": "Descending",
                                    },
                                },
                            }
                        ]
                    }
                },
                "topologySpreadConstraints": [
                    {"topologyKey": "region", "maxSkew": 1},
                    {"topologyKey": "rack", "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"},
                ],
            },
        ),
        (
            "all",
            {
                "placementType": "PickAll",
                "affinity": {
                    "clusterAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "clusterSelectorTerms": [
                                {
                                    "labelSelector": {
                                        "matchExpressions": [
                                            {"key": "tier", "operator": "NotIn", "values": ["silver"]}
                                        ]
                                    }
                                }
                            ]
                        }
                    }
                },
                "tolerations": [{"key": "gpu", "operator": "Exists"}],
            },
        ),
    )
]


class Hub:
    """The objects both ways are built from: the source of truth of a random sequence."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.clusters = {name: _ocm_cluster(rng, name) for name in NAMES[:16]}
        self.members = {name: _member(rng, name) for name in NAMES[:16]}
        self.sets: dict[str, ManagedClusterSet] = dict(SETS)
        self.bindings = {("apps", name): binding("apps", name) for name in ("prod", "dev")}
        self.scores = {
            (name, "load"): score(name, "load", {"cpu": rng.randrange(100)}) for name in NAMES[:10]
        }
        self.decisions = {
            ("apps", d.name): d
            for d in (decision("web", NAMES[:3]), decision("other", [NAMES[9], "elsewhere"]))
        }

    def ocm(self) -> OcmInventory:
        return OcmInventory(
            self.clusters.values(),
            self.sets.values(),
            self.bindings.values(),
            self.scores.values(),
            self.decisions.values(),
        )

    def step(self, inventory: OcmInventory, members: FleetInventory) -> tuple[OcmInventory, FleetInventory]:
        """One random change, applied to the hub and as a patch of both inventories."""
        rng = self.rng
        kind = rng.choice(
            ["edit", "edit", "edit", "add", "delete", "set", "binding", "score", "decision", "mixed"]
        )
        clusters: dict[str, Any] = {}
        member_changes: dict[str, Any] = {}
        sets: dict[str, Any] = {}
        bindings: dict[tuple[str, str], Any] = {}
        scores: dict[tuple[str, str], Any] = {}
        decisions: dict[tuple[str, str], Any] = {}
        if kind in ("edit", "mixed"):
            for name in rng.sample(sorted(self.clusters), 2):
                clusters[name] = _ocm_cluster(rng, name)
            for name in rng.sample(sorted(self.members), 2):
                member_changes[name] = _member(rng, name)
        if kind == "add":
            name = rng.choice([n for n in NAMES if n not in self.clusters] or NAMES)
            clusters[name] = _ocm_cluster(rng, name)
            member_changes[name] = _member(rng, name)
        if kind == "delete" and len(self.clusters) > 4:
            clusters[rng.choice(sorted(self.clusters))] = None
            member_changes[rng.choice(sorted(self.members))] = None
        if kind in ("set", "mixed"):
            sets["dev"] = rng.choice(
                [None, SETS["dev"], cluster_set("dev", "LabelSelector", {"matchLabels": {"region": "west"}})]
            )
        if kind == "binding":
            bindings[("apps", "any")] = rng.choice([None, binding("apps", "any")])
        if kind in ("score", "mixed"):
            name = rng.choice(NAMES)
            scores[(name, "load")] = rng.choice([None, score(name, "load", {"cpu": rng.randrange(100)})])
        if kind in ("decision", "mixed", "delete"):
            owner, name = rng.choice(
                [("web", "web-decision-1"), ("web", "web-decision-2"), ("other", "other-x")]
            )
            chosen = rng.sample(NAMES, rng.randrange(4))
            decisions[("apps", name)] = rng.choice([None, decision(owner, chosen, name=name)])
        for target, changes in (
            (self.clusters, clusters),
            (self.members, member_changes),
            (self.sets, sets),
            (self.bindings, bindings),
            (self.scores, scores),
            (self.decisions, decisions),
        ):
            for key, item in changes.items():
                if item is None:
                    target.pop(key, None)
                else:
                    target[key] = item
        patched = inventory.patched(clusters, sets, bindings, scores, decisions)
        return patched, members.patched(member_changes)


def _warm(inventory: OcmInventory, members: FleetInventory) -> list[Any]:
    """Schedule every placement (filling the inventories' cached columns) and answer what they decided."""
    results: list[Any] = [schedule_placement(p, inventory, NOW).selected for p in PLACEMENTS]
    for name in inventory.cluster_sets:
        _set_mask(inventory, name)
    inventory.resource("memory")
    inventory.add_on("load").score("cpu", inventory.size)
    _ = inventory.deleting, inventory.claims
    for crp in CRPS:
        outcome = schedule_crp(crp, members, [], fleet.NOW)
        results.append((outcome.selected, [(d.cluster_name, d.reason) for d in outcome.decisions]))
    members.selector_mask(parse_label_selector({"matchLabels": {"region": "east"}}))
    return results


def _set_mask(inventory: OcmInventory, name: str) -> list[bool] | None:
    try:
        return inventory.set_mask(name).tolist()
    except ClusterSetSelectorError:
        return None


def _partition(codes: np.ndarray) -> list[int]:
    """Codes renumbered by first appearance: equal exactly when the two codings group alike."""
    seen: dict[int, int] = {}
    return [seen.setdefault(int(code), len(seen)) for code in codes]


def _taints(rows: TaintRows) -> list[tuple[int, str, str, str, tuple[str, str, str]]]:
    keys, values, effects = (
        {code: text for text, code in table.items()} for table in (rows.keys, rows.values, rows.effects)
    )
    return [
        (owner, keys[key], values[value], effects[effect], rows.kinds[kind])
        for owner, key, value, effect, kind in zip(
            rows.owner.tolist(),
            rows.key.tolist(),
            rows.value.tolist(),
            rows.effect.tolist(),
            rows.kind.tolist(),
            strict=True,
        )
    ]


def _ocm_columns(inventory: OcmInventory) -> dict[str, Any]:
    """Everything the OCM scheduler reads of an inventory, as plain values; only columns already cached."""
    labels = {
        key: {v: p.tolist() for v, p in values.items()} for key, values in inventory.labels._index.items()
    }
    claims = {
        key: {v: p.tolist() for v, p in values.items()} for key, values in inventory.claims._index.items()
    }
    add_on = inventory._add_ons["load"]
    return {
        "names": inventory.names,
        "deleting": inventory.deleting.tolist(),
        "labels": labels,
        "claims": claims,
        "taints": _taints(inventory.taints.rows),
        "taint_times": (inventory.taints.added_us.tolist(), inventory.taints.added_ns.tolist()),
        "sets": {name: _set_mask(inventory, name) for name in sorted(inventory.cluster_sets)},
        "resources": {
            name: (column.allocatable.tolist(), column.eligible.tolist())
            for name, column in inventory._resources.items()
        },
        "add_on": (
            add_on.present.tolist(),
            add_on.has_valid_until.tolist(),
            add_on.valid_until_us.tolist(),
            add_on.objects,
            {name: (v.tolist(), f.tolist()) for name, (v, f) in add_on._scores.items()},
        ),
        "projections": {key: _partition(codes.codes) for key, codes in inventory._projections.items()},
        "decisions": _decisions(inventory),
        "bindings": sorted(inventory.bindings_by_namespace.get("apps", []), key=lambda b: b.name),
    }


def _decisions(inventory: OcmInventory) -> tuple[Any, ...]:
    index = inventory.decision_index()
    grouped = {key: sorted(d.name for d in group) for key, group in index.by_placement.items() if group}
    return (
        index.counts.tolist(),
        +index.outside,
        grouped,
        sorted((d.namespace, d.name) for d in index.decisions),
    )


def _fleet_columns(inventory: FleetInventory) -> dict[str, Any]:
    def column_values(key: str) -> tuple[list[str | None], int]:
        column = inventory._labels[key]
        decode = {code: value for value, code in column.values.items()}
        return [decode.get(int(code)) for code in column.codes], column.domain_count

    eligibility = inventory.eligibility
    return {
        "names": inventory.names,
        "taints": _taints(inventory.taints),
        "labels": {key: column_values(key) for key in inventory._labels},
        "properties": {
            name: (
                column.texts,
                column.present.tolist(),
                column.invalid.tolist(),
                [None if math.isnan(v) else v for v in column.approx.tolist()],
                list(column.cluster_names),
            )
            for name, column in inventory._properties.items()
        },
        "masks": {selector: mask.tolist() for selector, mask in inventory._selector_masks.items()},
        "eligibility": [np.asarray(column).tolist() for column in eligibility._columns()],
    }


@pytest.mark.parametrize("seed", range(40))
def test_patched_inventories_equal_fresh_ones(seed: int) -> None:
    rng = random.Random(seed)
    hub = Hub(rng)
    inventory, members = hub.ocm(), FleetInventory(hub.members.values())
    _warm(inventory, members)
    for _ in range(rng.randrange(1, 6)):
        before_ocm, before_fleet = _ocm_columns(inventory), _fleet_columns(members)
        patched, patched_members = hub.step(inventory, members)
        # the inventories a reader may still hold are left as they were
        assert _ocm_columns(inventory) == before_ocm
        assert _fleet_columns(members) == before_fleet
        fresh, fresh_members = hub.ocm(), FleetInventory(hub.members.values())
        # the patched columns are compared before anything is scheduled on them (no lazy rebuild)
        _warm(fresh, fresh_members)
        assert _ocm_columns(patched) == _ocm_columns(fresh)
        assert _fleet_columns(patched_members) == _fleet_columns(fresh_members)
        assert _warm(patched, patched_members) == _warm(fresh, fresh_members)
        inventory, members = patched, patched_members


def test_a_patch_keeping_the_names_shares_what_it_does_not_touch() -> None:
    hub = Hub(random.Random(7))
    inventory = hub.ocm()
    _warm(inventory, FleetInventory(hub.members.values()))
    name = NAMES[3]
    edited = hub.clusters[name]
    changed = ManagedCluster(edited.name, {**edited.labels, "env": "test"}, edited.claims, edited.taints)
    patched = inventory.patched({name: changed})
    assert patched.clusters[4] is inventory.clusters[4]
    assert patched.taints is inventory.taints and patched.claims is inventory.claims
    assert patched.decision_index() is inventory.decision_index()
    assert patched.labels._index["region"] is inventory.labels._index["region"]
    assert patched.labels._index["env"] is not inventory.labels._index["env"]
    assert patched.cluster(name) is changed and inventory.cluster(name) is edited
