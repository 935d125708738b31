"""A CEL selector is evaluated once per distinct projection: the values the expressions can read.

Clusters equal in every value an expression reads share one evaluation (its verdict, its cost and its
errors alike); clusters differing in any of them, or in an AddOnPlacementScore it reads, do not.
"""

from typing import Any

import pytest

from placement.scheduler.ocm.cel import ClusterPath, ClusterReads, ScoresProvider, compile_cel_selector
from tests.scheduler.ocm.cel_cluster import no_scores


def managed_cluster(name: str, labels: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if labels is not None:
        metadata["labels"] = labels
    return {"metadata": metadata, "spec": {"hubAcceptsClient": True}, "status": status}


def scores_of(items: list[dict[str, object]] | None) -> ScoresProvider:
    def scores(resource_name: str) -> list[dict[str, object]]:
        if items is None:
            raise LookupError(resource_name)
        return items

    return scores


def test_equal_projections_share_one_evaluation() -> None:
    selector = compile_cel_selector(['managedCluster.metadata.labels["environment"] == "prod"'])
    clusters = [
        managed_cluster("a", {"environment": "prod", "region": "eu"}),
        managed_cluster("b", {"environment": "prod", "region": "us"}),
        managed_cluster("c", {"environment": "dev", "region": "eu"}),
        managed_cluster("d", {"environment": "prod"}, clusterClaims=[{"name": "x", "value": "y"}]),
    ]
    verdicts = selector.matches_each((cluster, no_scores) for cluster in clusters)
    assert verdicts.matched == [True, True, False, True]
    assert verdicts.evaluations == 2


@pytest.mark.parametrize(
    ("expression", "paths"),
    [
        ('managedCluster.metadata.labels["env"] == "prod"', {("metadata", "labels", "env")}),
        ("managedCluster.metadata.labels.?env.orValue('') == 'x'", {("metadata", "labels", "env")}),
        ("has(managedCluster.metadata.labels.env)", {("metadata", "labels", "env")}),
        # an index that is not a string literal reads the whole map
        ('managedCluster.metadata.labels["e" + "nv"] == "prod"', {("metadata", "labels")}),
        (
            "managedCluster.status.clusterClaims.exists(c, c.name == 'x') && "
            "managedCluster.status.clusterClaims[0].value == 'y'",
            {("status", "clusterClaims")},
        ),
        ("managedCluster.metadata.name == 'a' || managedCluster.metadata.labels.env == 'b'",
         {("metadata", "name"), ("metadata", "labels", "env")}),
        ("dyn(managedCluster) != null", {()}),
        # a comprehension variable named like the cluster is taken for it: reading too much is harmless
        ("[{'metadata': 1}].exists(managedCluster, managedCluster.metadata == 1)", {()}),
        ("managedCluster.scores('usage').size() > 0", set()),
    ],
)  # fmt: skip
def test_reads_are_the_literal_selections_of_the_cluster(expression: str, paths: set[ClusterPath]) -> None:
    assert compile_cel_selector([expression]).reads.paths == paths


def test_scores_of_a_literal_name_are_read_not_the_name() -> None:
    reads = compile_cel_selector(["managedCluster.scores('usage').exists(s, s.value > 0)"]).reads
    assert reads == ClusterReads(frozenset(), frozenset({"usage"}))
    assert not reads.name_reachable


def test_clusters_with_other_scores_are_evaluated_apart() -> None:
    selector = compile_cel_selector(["managedCluster.scores('usage').exists(s, s.value > 0)"])
    positive, negative = [{"name": "cpu", "value": 5}], [{"name": "cpu", "value": -5}]
    inputs = [
        (managed_cluster("a"), scores_of(positive)),
        (managed_cluster("b"), scores_of(positive)),
        (managed_cluster("c"), scores_of(negative)),
        (managed_cluster("d"), scores_of(None)),
        (managed_cluster("e"), scores_of(None)),
    ]
    verdicts = selector.matches_each(inputs)
    assert verdicts.matched == [True, True, False, False, False]
    assert verdicts.evaluations == 3


def test_a_reachable_name_evaluates_every_cluster() -> None:
    selector = compile_cel_selector(["managedCluster.metadata.name.startsWith('a')"])
    assert selector.reads.name_reachable
    clusters = [managed_cluster(name, {"env": "prod"}) for name in ("a1", "a2", "b1")]
    verdicts = selector.matches_each((cluster, no_scores) for cluster in clusters)
    assert verdicts.matched == [True, True, False]
    assert verdicts.evaluations == 3


def test_a_non_literal_scores_name_reads_the_whole_cluster() -> None:
    reads = compile_cel_selector(["managedCluster.scores(managedCluster.metadata.labels.s).size() > 0"]).reads
    assert () in reads.paths
    assert reads.name_reachable


# clusters whose projections differ only in what Python's equality would merge or where a read stops
_VARIED = [
    managed_cluster("n1"),
    managed_cluster("n2", {}),
    managed_cluster("n3", {"env": 1}),
    managed_cluster("n4", {"env": True}),
    managed_cluster("n5", {"env": 1.0}),
    managed_cluster("n6", {"env": -0.0}),
    managed_cluster("n7", {"env": 0.0}),
    managed_cluster("n8", {"env": "prod", "tier": "gold"}),
    managed_cluster("n9", {"env": "prod", "tier": "gold"}),
    managed_cluster("n10", {"tier": "gold", "env": "prod"}),
    managed_cluster("n11", {"env": "p" * 200_000}),
    managed_cluster("n12", {"env": "p" * 200_000}),
    {"metadata": "not an object"},
]


def _contains(times: int) -> str:
    searches = ", ".join(["managedCluster.metadata.labels.env.contains('x')"] * times)
    return f"[{searches}].size() == {times}"


@pytest.mark.parametrize(
    "expressions",
    [
        ["type(managedCluster.metadata.labels.env) == int"],
        ["string(managedCluster.metadata.labels.env) == '-0'"],
        ["has(managedCluster.metadata.labels.env)"],
        ["managedCluster.metadata.?labels.?env.hasValue() || true"],
        ["managedCluster.metadata.labels.map(k, k)[0] == 'env'"],
        # `contains` on the long label costs 20,000: 50 of them pass the per-call limit, and twelve
        # expressions of 45 pass the budget of one cluster
        [_contains(50)],
        [_contains(45)] * 12,
    ],
)
def test_grouped_verdicts_are_the_per_cluster_verdicts(expressions: list[str]) -> None:
    selector = compile_cel_selector(expressions)
    verdicts = selector.matches_each((cluster, no_scores) for cluster in _VARIED)
    assert verdicts.matched == [selector.matches(cluster, no_scores) for cluster in _VARIED]
    assert verdicts.evaluations < len(_VARIED)
    # the limits decide: the long label fails, the short one matches
    if "contains" in expressions[0]:
        assert verdicts.matched[7:12] == [True, True, True, False, False]


KUBE_VERSION = "kubeversion.open-cluster-management.io"
CLAIMS = "managedCluster.status.clusterClaims"


def claims(version: object, cluster_id: str, *more: dict[str, object]) -> list[dict[str, object]]:
    return [{"name": "id.k8s.io", "value": cluster_id}, {"name": KUBE_VERSION, "value": version}, *more]


@pytest.mark.parametrize(
    ("expression", "guard"),
    [
        (f"{CLAIMS}.exists(c, c.name == '{KUBE_VERSION}' && c.value == 'v1')", KUBE_VERSION),
        (f"{CLAIMS}.filter(c, '{KUBE_VERSION}' == c.name).size() == 1", KUBE_VERSION),
        (f"{CLAIMS}.all(c, c.name == '{KUBE_VERSION}' && c.value != '' && true)", KUBE_VERSION),
        # the guard must be what the body evaluates first, and decide it alone
        (f"{CLAIMS}.exists(c, c.value == 'v1' && c.name == '{KUBE_VERSION}')", None),
        (f"{CLAIMS}.exists(c, c.name == '{KUBE_VERSION}' || c.value == 'v1')", None),
        (f"{CLAIMS}.exists(c, c.name == c.value)", None),
        (f"{CLAIMS}.exists(c, [c][0].name == 'x')", None),
    ],
)  # fmt: skip
def test_a_name_guard_is_read_from_the_start_of_the_body(expression: str, guard: str | None) -> None:
    reads = compile_cel_selector([expression]).reads
    assert reads.paths == {("status", "clusterClaims")}
    assert reads.guards == (set() if guard is None else {(("status", "clusterClaims"), frozenset({guard}))})


def test_a_guarded_search_reads_only_the_names_of_other_elements() -> None:
    selector = compile_cel_selector(
        [f"managedCluster.status.clusterClaims.exists(c, c.name == '{KUBE_VERSION}' && c.value == 'v1.30')"]
    )
    clusters = [
        managed_cluster("a", clusterClaims=claims("v1.30", "id-a")),
        managed_cluster("b", clusterClaims=claims("v1.30", "id-b")),
        managed_cluster("c", clusterClaims=claims("v1.29", "id-c")),
        managed_cluster("d", clusterClaims=claims("v1.29", "id-d")),
    ]
    verdicts = selector.matches_each((cluster, no_scores) for cluster in clusters)
    assert verdicts.matched == [True, True, False, False]
    assert verdicts.evaluations == 2


def test_a_guarded_score_filter_reads_only_the_named_score() -> None:
    selector = compile_cel_selector(
        ["managedCluster.scores('usage').filter(s, s.name == 'cpu').all(s, s.value > 0)"]
    )
    assert selector.reads.score_guards == {("usage", frozenset({"cpu"}))}
    inputs = [
        (managed_cluster("a"), scores_of([{"name": "cpu", "value": 5}, {"name": "memory", "value": 1}])),
        (managed_cluster("b"), scores_of([{"name": "cpu", "value": 5}, {"name": "memory", "value": 2}])),
        (managed_cluster("c"), scores_of([{"name": "cpu", "value": -5}, {"name": "memory", "value": 2}])),
    ]
    verdicts = selector.matches_each(inputs)
    assert verdicts.matched == [True, True, False]
    assert verdicts.evaluations == 2


# claim lists where an element's name is missing, not a string, equal to the guard, or repeated
_CLAIMED = [
    managed_cluster(f"n{i}", clusterClaims=claim_list)
    for i, claim_list in enumerate(
        [
            claims("v1.30", "a"),
            claims("v1.30", "b"),
            claims("v1.30", "c" * 200_000),
            claims(130, "d"),
            claims(True, "e"),
            claims("v1.30", "f", {"value": "v1.30"}),
            claims("v1.30", "g", {"name": 1, "value": "v1.30"}),
            claims("v1.29", "h", {"name": KUBE_VERSION, "value": "v1.30"}),
            claims("v1.29", "i", {"name": KUBE_VERSION, "value": "v1.31"}),
            claims("v1.29", "j", {"name": "id.k8s.io", "value": "j"}),
            [],
        ]
    )
]


@pytest.mark.parametrize(
    "expression",
    [
        f"managedCluster.status.clusterClaims.exists(c, c.name == '{KUBE_VERSION}' && c.value == 'v1.30')",
        f"managedCluster.status.clusterClaims.exists_one(c, c.name == '{KUBE_VERSION}' && c.value > 'v1.29')",
        f"managedCluster.status.clusterClaims.all(c, c.name == '{KUBE_VERSION}' && c.value == 'v1.30')",
        f"managedCluster.status.clusterClaims.map(c, c.name == '{KUBE_VERSION}').exists(b, b)",
        f"size(managedCluster.status.clusterClaims.filter(c, c.name == '{KUBE_VERSION}')) == 1",
        # the long id is read in full by a second, unguarded search: the per-call limit decides
        f"managedCluster.status.clusterClaims.exists(c, c.name == '{KUBE_VERSION}' && c.value == 'v1.30') && "
        "managedCluster.status.clusterClaims.exists(c, c.value.contains('x') && c.value.contains('y'))"
        " == false",
    ],
)
def test_guarded_verdicts_are_the_per_cluster_verdicts(expression: str) -> None:
    selector = compile_cel_selector([expression])
    verdicts = selector.matches_each((cluster, no_scores) for cluster in _CLAIMED)
    assert verdicts.matched == [selector.matches(cluster, no_scores) for cluster in _CLAIMED]
