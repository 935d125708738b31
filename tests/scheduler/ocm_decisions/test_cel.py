"""CEL cluster selectors: cel-go compile errors, `managedCluster.scores`, no match on failure."""

from typing import Any

import pytest

from placement.scheduler.ocm.cel import CelCompileError, compile_cel_selector

CLUSTER = {
    "apiVersion": "cluster.open-cluster-management.io/v1",
    "kind": "ManagedCluster",
    "metadata": {"name": "cluster1", "labels": {"region": "us-east-1", "env": "prod", "version": "1.30.2"}},
    "status": {"clusterClaims": [{"name": "platform.open-cluster-management.io", "value": "AWS"}]},
}

ADDON_SCORES = {
    "test-addon": [{"name": "test-score", "value": 90}, {"name": "cpu", "value": 3, "quantity": "3"}]
}


def scores(resource_name: str) -> list[dict[str, Any]]:
    if resource_name not in ADDON_SCORES:
        raise LookupError(
            f'addonplacementscores.cluster.open-cluster-management.io "{resource_name}" not found'
        )
    return ADDON_SCORES[resource_name]


def matches(*expressions: str) -> bool:
    return compile_cel_selector(expressions).matches(CLUSTER, scores)


@pytest.mark.parametrize(
    "expression",
    [
        'managedCluster.metadata.labels["region"] == "us-east-1"',
        "managedCluster.scores(\"test-addon\").filter(s, s.name == 'test-score').all(e, e.value > 80)",
        'managedCluster.status.clusterClaims.exists(c, c.name == "platform.open-cluster-management.io")',
        "managedCluster.metadata.labels[\"version\"].matches('^1\\\\.(30|31)\\\\.\\\\d+$')",
        "has(managedCluster.metadata.labels.env)"
        ' && managedCluster.metadata.labels.env.upperAscii() == "PROD"',
        'managedCluster.scores("test-addon")'
        '.exists(s, s.name == "cpu" && quantity(s.quantity).isLessThan(quantity("4")))',
        '"us-east-1,us-west-1".split(",").exists(r, r == managedCluster.metadata.labels.region)',
    ],
)
def test_expressions_that_match(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('managedCluster["metadata"]["name"] == "cluster1"', True),
        ('managedCluster["""metadata"""].name == "cluster1"', True),
        ("size(managedCluster) == 4", True),  # the whole object, not only the fields read by name
        ('has(managedCluster.spec) || managedCluster.kind == "ManagedCluster"', True),
        ("has(managedCluster.spec)", False),
        ('["metadata"].all(k, k in managedCluster)', True),
    ],
)
def test_cluster_object_fields(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


def test_expressions_are_anded() -> None:
    assert not matches(
        'managedCluster.metadata.labels["env"] == "prod"', 'managedCluster.metadata.name == "other"'
    )


def test_empty_expression_list_matches_everything() -> None:
    assert compile_cel_selector([]).matches({}, scores)


@pytest.mark.parametrize(
    "expression",
    [
        'managedCluster.metadata.labels["missing"] == "x"',  # runtime error: no such key
        "managedCluster.metadata.name",  # not a boolean
        'managedCluster.scores("absent").size() == 0',  # upstream: a missing AddOnPlacementScore is an error
        "optional.none().value() == 1",  # dereferencing an empty optional is an error
    ],
)
def test_errors_and_non_booleans_do_not_match(expression: str) -> None:
    assert not matches(expression)


def test_errors_short_circuit_like_cel() -> None:
    assert matches('managedCluster.scores("absent").size() == 0 || true')


def test_undeclared_identifier_fails_to_compile_like_cel_go() -> None:
    with pytest.raises(CelCompileError) as raised:
        compile_cel_selector(["invalid.expression"])
    assert str(raised.value) == (
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'invalid' (in container '')\n"
        " | invalid.expression\n"
        " | ^"
    )
    assert raised.value.message == str(raised.value)


@pytest.mark.parametrize(
    ("expression", "issue"),
    [
        ("managedCluster.nosuch()", "undeclared reference to 'nosuch'"),
        ("nosuch(managedCluster)", "undeclared reference to 'nosuch'"),
        ("[1, 2].all(x, x > y)", "undeclared reference to 'y'"),
        ("has(managedCluster)", "invalid argument to has() macro"),
        ("managedCluster.metadata.name ==", "Syntax error"),
    ],
)
def test_compile_errors(expression: str, issue: str) -> None:
    with pytest.raises(CelCompileError, match="^compilation failed: ERROR: <input>:1:") as raised:
        compile_cel_selector(['managedCluster.metadata.name != ""', expression])
    assert issue in str(raised.value)


def test_comprehension_variables_are_scoped_to_their_macro() -> None:
    assert matches("[1, 2].all(x, [3].exists(y, y > x))")
    with pytest.raises(CelCompileError, match="undeclared reference to 'x'"):
        compile_cel_selector(["[1, 2].all(x, true) && x == 1"])


def test_compiled_selectors_are_cached_by_expressions() -> None:
    expressions = ['managedCluster.metadata.name == "cluster1"']
    assert compile_cel_selector(expressions) is compile_cel_selector(tuple(expressions))
