"""CEL selectors are limited by cel-go's runtime cost, as OCM limits them.

OCM builds each program with a per-call cost limit of 1,000,000 and gives one cluster's expressions a
budget of 10,000,000 in all. An expression's cost is pinned exactly by padding it to the limit: a true
expression whose cost plus the padding is 1,000,000 matches, one unit more and it does not. The costs
below are what upstream (OCM's `NewCELSelector(...).Validate` on the test cluster) reports.
"""

import pytest

from placement.scheduler.ocm.cel import compile_cel_selector
from tests.scheduler.ocm.cel_cluster import CLUSTER, no_scores

PER_CALL_LIMIT = 1_000_000

UPSTREAM_COSTS = [
    ('managedCluster.metadata.labels["env"] == "prod"', 5),
    ('managedCluster.metadata.name.startsWith("cluster")', 4),
    ('managedCluster.metadata.name.matches("^c.*1$")', 5),
    ('matches(managedCluster.metadata.name, "^c.*1$")', 4),
    ('managedCluster.metadata.labels.env.contains("ro")', 5),
    ('managedCluster.metadata.name + "cluster1" == "cluster1cluster1"', 7),
    ('managedCluster.metadata.name + managedCluster.metadata.name == "cluster1cluster1"', 9),
    (
        '"x" in [managedCluster.metadata.name, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]'
        " == false",
        26,
    ),
    ('string(b"abcdefghijklmnopqrstuvwxyz") == "abcdefghijklmnopqrstuvwxyz"', 6),
    ('string(dyn(b"abcdefghijklmnopqrstuvwxyz")) == "abcdefghijklmnopqrstuvwxyz"', 5),
    ('"abcdefghijklmnopqrstuvwxyz %s".format([1]) != ""', 13),
    ('{"a": 1}.a == 1', 33),
    ("[1,2,3].all(x, x > 0)", 26),
    ("![1,2,3].all(x, x > 1)", 19),
    ("[1,2,3].exists(x, x > 1)", 26),
    ("![1,2,3].exists(x, x > 5)", 30),
    ("![1,2,3].exists_one(x, x > 1)", 23),
    ("[1,2,3].map(x, x * 2).size() == 3", 65),
    ("[1,2,3].filter(x, x > 1).size() == 2", 55),
    ("[1,2,3].map(x, x > 1, x * 2).size() == 2", 57),
    ('managedCluster.metadata.labels.all(k, k != "")', 24),
    ("has(managedCluster.metadata.labels.env)", 4),
    ("has(managedCluster.metadata)", 2),
    ('{"prod": 1}[managedCluster.metadata.labels.env] == 1', 36),
    ('{"prod": 1}[managedCluster.metadata.labels.env + ""] == 1', 38),
    ('(true ? managedCluster.metadata.name : "x") == "cluster1"', 3),
    ('(true ? managedCluster : {}).metadata.name == "cluster1"', 3),
    ('(true ? "a" + "b" : "b") == "ab"', 2),
    ("type(1) == int", 2),
    ('managedCluster.metadata.?name.orValue("") == "cluster1"', 4),
    ("!managedCluster.metadata.?nope.x.y.hasValue()", 4),
    ('{"a": {"b": 1}}.?a.b.hasValue()', 64),
    ("optional.of(1).optMap(x, x + 1).value() == 2", 19),
    ("optional.of([1]).optFlatMap(x, x[?0]).hasValue()", 37),
    ("[?optional.of(1), 2].size() == 2", 13),
    ('{?"a": optional.none()} == {}', 61),
    ("'{\"a\": [1, 2]}'.parseJSON().a.size() == 2", 46),
    ("[1,2,3].exists(x, x == 1) || [1,2,3].exists(x, x == 1)", 20),
    ("[1,2].map(i, [1,2][i - 1]).size() == 2", 75),
    ('semver("1.2.3").major() == 1', 3),
]


def padding(cost: int) -> str:
    """A true expression costing exactly `cost` (at least 1001): a `contains` of two strings costs the
    product of their lengths over ten, a `startsWith` the receiver's length over ten."""
    product = (cost - 1) // 1000
    rest = cost - 1000 * product
    return f'"{"a" * 10_000}".contains("{"a" * (10 * product)}") && "{"a" * (10 * rest)}".startsWith("")'


def matches(*expressions: str) -> bool:
    return compile_cel_selector(expressions).matches(CLUSTER, no_scores)


@pytest.mark.parametrize(("expression", "cost"), UPSTREAM_COSTS)
def test_expression_costs_what_upstream_charges(expression: str, cost: int) -> None:
    assert matches(expression)
    assert matches(f"{padding(PER_CALL_LIMIT - cost)} && {expression}")
    assert not matches(f"{padding(PER_CALL_LIMIT - cost + 1)} && {expression}")


def test_an_expression_over_the_per_call_limit_does_not_match() -> None:
    assert matches(padding(PER_CALL_LIMIT))
    assert not matches(padding(PER_CALL_LIMIT + 1))


def test_one_clusters_expressions_share_the_runtime_budget() -> None:
    # ten expressions at the per-call limit spend the whole budget; an eleventh has nothing left
    at_limit = padding(PER_CALL_LIMIT)
    assert matches(*[at_limit] * 10)
    assert not matches(*[at_limit] * 11)
    assert matches(*[at_limit] * 10, "true")


def test_the_budget_is_per_cluster() -> None:
    selector = compile_cel_selector([padding(PER_CALL_LIMIT)] * 10)
    assert selector.matches(CLUSTER, no_scores)
    assert selector.matches(CLUSTER, no_scores)
