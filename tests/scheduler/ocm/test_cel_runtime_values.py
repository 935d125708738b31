"""How CEL values compare, convert and fail at run time, as cel-go evaluates them for OCM.

Every expected result was produced by upstream (OCM's `helpers.NewEnv` + `NewCELSelector` through the
conformance oracle) on the same ManagedCluster and AddOnPlacementScore: JSON numbers parsed by
`parseJSON` are doubles, numbers of different types compare by value, values of two other types are
unequal rather than an error, `string()` prints as Go does, and an error stays an error through
every operator (the cluster does not match).
"""

import pytest

from placement.scheduler.ocm.cel import compile_cel_selector
from placement.scheduler.ocm.cluster_object import typed_cluster_object

CLUSTER = typed_cluster_object(
    {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "c1"},
        "spec": {"hubAcceptsClient": True},
        "status": {
            "clusterClaims": [
                {
                    "name": "json.example.com",
                    "value": '{"weight": 2, "ratio": 0.5, "tags": [1, 2], "none": null}',
                }
            ]
        },
    }
)

JSON = "managedCluster.status.clusterClaims[0].value.parseJSON()"


def scores(resource_name: str) -> list[dict[str, object]]:
    if resource_name != "usage":
        raise LookupError(resource_name)
    return [{"name": "cpu", "value": 30}]


UPSTREAM_RESULTS = [
    # parseJSON: every JSON number is a double
    (f"{JSON}.weight == 2", True),
    (f"{JSON}.weight == 2.0", True),
    (f"type({JSON}.weight) == double", True),
    (f"string({JSON}.weight) == '2'", True),
    (f"{JSON}.weight > 1", True),
    (f"{JSON}.ratio < 1", True),
    (f"{JSON}.tags == [1, 2]", True),
    (f"2 in {JSON}.tags", True),
    (f"{JSON}.none == null", True),
    (f"{JSON}.weight != 'x'", True),
    (f"{JSON}.weight == 'x'", False),
    ("'[1,2,3]'.parseJSON().size() == 3", True),
    ("'NaN'.parseJSON() == 1.0", False),
    ("'{\"a\": 1} x'.parseJSON().size() == 1", False),
    # heterogeneous equality and ordering of dyn values
    ("dyn(1) < 2.5", True),
    ("dyn(2u) == 2", True),
    ("dyn(2u) >= 1.5", True),
    ("{'a': 1.0} == dyn({'a': 1})", True),
    ("dyn(1.0) in {1: 'x'}", True),
    ("dyn(true) == 1", False),
    ("dyn(true) != 1", True),
    # an error goes through every operator: the expression is not true, negated or not
    ("!(managedCluster.scores('missing').size() == 0)", False),
    ("!(managedCluster.scores('missing').size() != 0)", False),
    ("!(managedCluster.scores('missing')[0].value < 1)", False),
    ("!(1 in managedCluster.scores('missing'))", False),
    ("string(managedCluster.metadata.labels['absent']) != 'x'", False),
    ("managedCluster.scores('usage')[0] == {'name': 'cpu', 'value': 30}", True),
    # string() as cel-go prints: Go's %g for doubles, RFC 3339 with nanoseconds for timestamps
    ("string(2.0) == '2'", True),
    ("string(1234567.0) == '1.234567e+06'", True),
    ("string(123456.0) == '123456'", True),
    ("string(0.00001) == '1e-05'", True),
    ("string(-0.0) == '-0'", True),
    ("string(double('NaN')) == 'NaN'", True),
    ("string(double('-Infinity')) == '-Inf'", True),
    ("string(true) == 'true'", True),
    ("string(duration('1.5s')) == '1.5s'", True),
    ("string(timestamp('2024-01-01T00:00:00.500Z')) == '2024-01-01T00:00:00.5Z'", True),
    ("string(timestamp('2024-01-01T02:00:00+02:00')) == '2024-01-01T02:00:00+02:00'", True),
]


@pytest.mark.parametrize(("expression", "expected"), UPSTREAM_RESULTS)
def test_runtime_value_as_upstream(expression: str, expected: bool) -> None:
    assert compile_cel_selector([expression]).matches(CLUSTER, scores) is expected
