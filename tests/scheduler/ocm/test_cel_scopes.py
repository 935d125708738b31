"""Where a CEL variable is bound: a comprehension variable only inside its macro's body, an inner macro's
variable shadowing an outer one of the same name only inside the inner body, and one cluster's value and
scores never seen by the evaluation of another with the same compiled selector.

One evaluator runs a whole expression, binding and unbinding the macro variables as it goes, and every
evaluation shares the function library, so these fail if a binding outlives its macro or an evaluation.
"""

import copy

import pytest

from placement.scheduler.ocm.cel import ScoresProvider, compile_cel_selector
from tests.scheduler.ocm.cel_cluster import CLUSTER, no_scores

SCOPED = [
    # the inner `x` is 5 inside the inner body; the outer `x` is 1 again after it
    ("[1].exists(x, [5].exists(x, x == 5) && x == 1)", True),
    ("[1].exists(x, [5].exists(x, x == 5) && x == 5)", False),
    # the outer variable is seen inside the inner body, and still bound after the inner macro ends early
    ("[1, 2].all(x, [x + 10, 0].exists(y, y > x) && x < 3)", True),
    ("[1, 2].all(x, [x + 10].all(y, y == 11) && x == 1)", False),
    # a macro over an error ends early: the outer binding is back for what follows
    ("[1].exists(x, [0].exists(x, 1 / x == 1) || x == 1)", True),
    ("[2].map(x, [3].map(x, x * 10)[0] + x)[0] == 32", True),
    ("[1].exists(x, [2].exists(y, [3].exists(x, x == 3)) && x == 1)", True),
    # the cluster variable shadowed by a macro variable, then the cluster again
    (
        'managedCluster.metadata.labels.exists(managedCluster, managedCluster == "env")'
        ' && managedCluster.metadata.name == "cluster1"',
        True,
    ),
]


@pytest.mark.parametrize(("expression", "expected"), SCOPED)
def test_macro_variable_bound_only_in_its_body(expression: str, expected: bool) -> None:
    assert compile_cel_selector([expression]).matches(CLUSTER, no_scores) is expected


def test_evaluations_do_not_share_bindings() -> None:
    other = copy.deepcopy(CLUSTER)
    other["metadata"] = {"name": "cluster2", "labels": {"env": "dev"}}
    selector = compile_cel_selector(
        ['managedCluster.metadata.labels.exists(k, managedCluster.metadata.labels[k] == "prod")']
    )
    assert [selector.matches(cluster, no_scores) for cluster in (CLUSTER, other, CLUSTER, other)] == [
        True,
        False,
        True,
        False,
    ]


def test_evaluations_do_not_share_scores() -> None:
    def scores_of(value: int) -> ScoresProvider:
        return lambda name: [{"name": "cpu", "value": value}]

    low, high = scores_of(30), scores_of(50)
    selector = compile_cel_selector(['managedCluster.scores("usage").exists(s, s.value > 40)'])
    assert [selector.matches(CLUSTER, scores) for scores in (low, high, low, high)] == [
        False,
        True,
        False,
        True,
    ]
