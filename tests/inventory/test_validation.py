"""`inventory.validation`: the limits a hub object keeps before it is stored, at their boundaries.

Each case is one field of an otherwise valid object: the value at the limit passes, one over is refused
with a reason naming the field and never quoting more than the first characters of the value.
"""

import json
from copy import deepcopy
from typing import Any

import pytest

from inventory import validation
from inventory.validation import MAX_OBJECT_BYTES, problems, reason

CLUSTER: dict[str, Any] = {
    "apiVersion": "cluster.open-cluster-management.io/v1",
    "kind": "ManagedCluster",
    "metadata": {
        "name": "cluster-1",
        "uid": "6f1c3a0e-8a1b-4b55-9d0c-2b1f9a6c7e11",
        "resourceVersion": "123",
        "labels": {"region": "eu-west-1", "cluster.open-cluster-management.io/clusterset": "prod"},
        "annotations": {"note": "hello"},
    },
    "spec": {"taints": [{"key": "example.com/gpu", "value": "a100", "effect": "NoSelect"}]},
    "status": {
        "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True", "reason": "Ok"}],
        "clusterClaims": [{"name": "id.k8s.io", "value": "abc"}],
    },
}
MEMBER = {
    "metadata": {"name": "member-1"},
    "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
    "status": {
        "agentStatus": [{"type": "MemberAgent", "conditions": [{"type": "Joined", "status": "True"}]}]
    },
}
SCORE = {
    "metadata": {"name": "resource-usage", "namespace": "cluster-1"},
    "status": {"scores": [{"name": "cpu", "value": 3}]},
}


def with_value(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `base` with `value` at the dotted `path` (list items as numbers)."""
    obj = deepcopy(base)
    *parents, last = path.split(".")
    target: Any = obj
    for part in parents:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    target[int(last) if last.isdigit() else last] = value
    return obj


def labels(count: int) -> dict[str, str]:
    return {f"label-{number}": "x" for number in range(count)}


# (case, kind, namespaced, object, field the reason names, or None when the object is valid)
CASES = [
    ("name of 253", "ManagedCluster", False, with_value(CLUSTER, "metadata.name", "a" * 253), None),
    (
        "name of 254",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.name", "a" * 254),
        "metadata.name",
    ),
    (
        "name with capitals",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.name", "Cluster"),
        "metadata.name",
    ),
    (
        "name with a final newline",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.name", "a\n"),
        "metadata.name",
    ),
    ("empty name", "ManagedCluster", False, with_value(CLUSTER, "metadata.name", ""), "metadata.name"),
    (
        "name of another type",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.name", 7),
        "metadata.name",
    ),
    ("namespace of 63", "AddOnPlacementScore", True, with_value(SCORE, "metadata.namespace", "n" * 63), None),
    (
        "namespace of 64",
        "AddOnPlacementScore",
        True,
        with_value(SCORE, "metadata.namespace", "n" * 64),
        "metadata.namespace",
    ),
    (
        "namespace with dots",
        "AddOnPlacementScore",
        True,
        with_value(SCORE, "metadata.namespace", "a.b"),
        "metadata.namespace",
    ),
    ("uid of 65", "ManagedCluster", False, with_value(CLUSTER, "metadata.uid", "u" * 65), "metadata.uid"),
    (
        "resourceVersion of 65",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.resourceVersion", "1" * 65),
        "metadata.resourceVersion",
    ),
    (
        "label value of 63",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels.tier", "v" * 63),
        None,
    ),
    (
        "label value of 64",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels.tier", "v" * 64),
        'metadata.labels["tier"]',
    ),
    (
        "label value of 100 KB",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels.tier", "v" * 100_000),
        'metadata.labels["tier"]',
    ),
    (
        "label value of another type",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels.tier", 3),
        'metadata.labels["tier"]',
    ),
    (
        "label key name of 63",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels." + "k" * 63, "x"),
        None,
    ),
    (
        "label key name of 64",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels." + "k" * 64, "x"),
        "key",
    ),
    (
        "label key prefix of 253",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels", {"p" * 253 + "/k": "x"}),
        None,
    ),
    (
        "label key prefix of 254",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels", {"p" * 254 + "/k": "x"}),
        "key",
    ),
    (
        "labels of another type",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels", ["a"]),
        "metadata.labels",
    ),
    (
        f"{validation.MAX_LABELS} labels",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels", labels(validation.MAX_LABELS)),
        None,
    ),
    (
        f"{validation.MAX_LABELS + 1} labels",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.labels", labels(validation.MAX_LABELS + 1)),
        "metadata.labels",
    ),
    (
        "annotations of 256 KiB",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.annotations", {"a": "v" * (256 * 1024 - 1)}),
        None,
    ),
    (
        "annotations of 256 KiB and 1 byte",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.annotations", {"a": "v" * 256 * 1024}),
        "metadata.annotations",
    ),
    (
        "annotation key with capitals",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "metadata.annotations", {"Example.com/Note": "x"}),
        None,
    ),
    (
        "OCM taint key of 316",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.key", "p" * 250 + "/" + "k" * 65),
        None,
    ),
    (
        "OCM taint key of 317",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.key", "p" * 250 + "/" + "k" * 66),
        "spec.taints[0].key",
    ),
    (
        "OCM taint key of 2,000",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.key", "k" * 2000),
        "spec.taints[0].key",
    ),
    (
        "OCM taint key with a space",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.key", "a b"),
        "spec.taints[0].key",
    ),
    (
        "OCM taint value of 1,024",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.value", "v" * 1024),
        None,
    ),
    (
        "OCM taint value of 1,025",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.value", "v" * 1025),
        "spec.taints[0].value",
    ),
    (
        "OCM taint effect unknown",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints.0.effect", "NoSchedule"),
        "spec.taints[0].effect",
    ),
    (
        "taints of another type",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints", "NoSelect"),
        "spec.taints",
    ),
    (
        "a taint of another type",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "spec.taints", ["gpu"]),
        "spec.taints[0]",
    ),
    (
        f"{validation.MAX_TAINTS + 1} taints",
        "ManagedCluster",
        False,
        with_value(
            CLUSTER,
            "spec.taints",
            [{"key": f"t{n}", "effect": "NoSelect"} for n in range(validation.MAX_TAINTS + 1)],
        ),
        "spec.taints",
    ),
    (
        "taint keys over their column",
        "ManagedCluster",
        False,
        with_value(
            CLUSTER, "spec.taints", [{"key": f"{n}" + "k" * 300, "effect": "NoSelect"} for n in range(7)]
        ),
        "spec.taints",
    ),
    (
        "claim name of 253",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "status.clusterClaims.0.name", "c" * 253),
        None,
    ),
    (
        "claim name of 254",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "status.clusterClaims.0.name", "c" * 254),
        "status.clusterClaims[0].name",
    ),
    (
        "claim value of 1,025",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "status.clusterClaims.0.value", "c" * 1025),
        "status.clusterClaims[0].value",
    ),
    (
        f"{validation.MAX_CLAIMS + 1} claims",
        "ManagedCluster",
        False,
        with_value(
            CLUSTER,
            "status.clusterClaims",
            [{"name": f"c{n}", "value": "v"} for n in range(validation.MAX_CLAIMS + 1)],
        ),
        "status.clusterClaims",
    ),
    (
        f"{validation.MAX_CONDITIONS + 1} conditions",
        "ManagedCluster",
        False,
        with_value(
            CLUSTER,
            "status.conditions",
            [{"type": f"T{n}", "status": "True"} for n in range(validation.MAX_CONDITIONS + 1)],
        ),
        "status.conditions",
    ),
    (
        "condition message of 32 KiB and 1",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "status.conditions.0.message", "m" * 32769),
        "status.conditions[0].message",
    ),
    (
        "Fleet taint value of 63",
        "MemberCluster",
        False,
        with_value(MEMBER, "spec.taints.0.value", "v" * 63),
        None,
    ),
    (
        "Fleet taint value of 64",
        "MemberCluster",
        False,
        with_value(MEMBER, "spec.taints.0.value", "v" * 64),
        "spec.taints[0].value",
    ),
    (
        "Fleet taint key name of 64",
        "MemberCluster",
        False,
        with_value(MEMBER, "spec.taints.0.key", "k" * 64),
        "spec.taints[0].key",
    ),
    (
        "Fleet agent condition type with a space",
        "MemberCluster",
        False,
        with_value(MEMBER, "status.agentStatus.0.conditions.0.type", "a b"),
        "status.agentStatus[0].conditions[0].type",
    ),
    (
        "score of int32 max",
        "AddOnPlacementScore",
        True,
        with_value(SCORE, "status.scores.0.value", 2**31 - 1),
        None,
    ),
    (
        "score over int32",
        "AddOnPlacementScore",
        True,
        with_value(SCORE, "status.scores.0.value", 2**31),
        "status.scores[0].value",
    ),
    (
        "score of another type",
        "AddOnPlacementScore",
        True,
        with_value(SCORE, "status.scores.0.value", "3"),
        "status.scores[0].value",
    ),
    (
        "binding of a set named badly",
        "ManagedClusterSetBinding",
        True,
        {"metadata": {"name": "s", "namespace": "n"}, "spec": {"clusterSet": "S" * 300}},
        "spec.clusterSet",
    ),
    (
        "object of 1.5 MiB and more",
        "Placement",
        True,
        {"metadata": {"name": "p", "namespace": "n"}, "spec": {"blob": "b" * validation.MAX_OBJECT_BYTES}},
        "object",
    ),
    (
        "a NUL character in a condition message",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "status.conditions.0.message", "a\x00b"),
        "NUL",
    ),
    (
        "the text \\u0000 in a condition message",
        "ManagedCluster",
        False,
        with_value(CLUSTER, "status.conditions.0.message", "\\u0000"),
        None,
    ),
    ("metadata of another type", "ManagedClusterSet", False, {"metadata": "cluster"}, "metadata"),
    ("an object that is no mapping", "ManagedClusterSet", False, ["cluster"], "object"),
]


@pytest.mark.parametrize(
    ("kind", "namespaced", "obj", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_limits(kind: str, namespaced: bool, obj: Any, field: str | None) -> None:
    found = problems(kind, obj, namespaced=namespaced)
    if field is None:
        assert found == []
    else:
        assert found, "refused"
        assert field in found[0]
        # a reason is readable: short whatever the value's length
        assert len(reason(found)) < 1000


def test_nesting_too_deep_to_measure_is_refused() -> None:
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"d": deep}
    assert problems(
        "Placement", {"metadata": {"name": "p", "namespace": "n"}, "spec": deep}, namespaced=True
    ) == ["object: cannot be measured: RecursionError"]


def test_a_reason_names_five_problems_and_counts_the_rest() -> None:
    bad = {"metadata": {"name": "x", "labels": {f"bad key {n}": "x" for n in range(8)}}}
    text = reason(problems("ManagedCluster", bad, namespaced=False))
    assert text.count("bad key") == 5
    assert text.endswith("; and 3 more")


def test_long_values_are_quoted_cut() -> None:
    assert validation.shown("v" * 100_000) == f'"{"v" * validation.SHOWN}"… (100000 characters)'
    assert validation.shown({"a": 1}) == "a mapping"


def test_the_size_is_the_compact_json_whichever_encoder_writes_it() -> None:
    """orjson measures what it can write; an integer beyond 64 bits goes to `json` and is measured the
    same way, a lone surrogate (no UTF-8 holds it) cannot be measured at all."""
    filler = "é" * (MAX_OBJECT_BYTES // 2)
    fits = {"metadata": {"name": "p", "namespace": "n"}, "spec": {"big": 2**70, "text": filler[:-100]}}
    assert problems("Placement", fits, namespaced=True) == []
    over = {"metadata": {"name": "p", "namespace": "n"}, "spec": {"big": 2**70, "text": filler + "éé"}}
    size = len(json.dumps(over, separators=(",", ":"), ensure_ascii=False).encode())
    assert problems("Placement", over, namespaced=True) == [
        f"object: {size} bytes, at most {MAX_OBJECT_BYTES} are kept"
    ]
    lone = {"metadata": {"name": "p", "namespace": "n"}, "spec": {"text": "\udc80"}}
    assert problems("Placement", lone, namespaced=True) == ["object: cannot be measured: UnicodeEncodeError"]
