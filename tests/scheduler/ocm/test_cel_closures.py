"""CEL expressions compiled into closures evaluate exactly as the interpreter does.

Random expressions of the forms the closures cover (reads of labels, fields and add-on scores compared
with literals, arithmetic, string functions, list literals, `has()`, `dyn()`, `!`, `&&`, `||` and every
comprehension macro) are evaluated on random clusters both ways: the value or error, the cost charged
and where a per-call cost limit stops the evaluation must be the same. The clusters hold values of every
JSON type, missing keys, int64 extremes (so arithmetic overflows) and clusters without the score.
"""

from dataclasses import replace
from typing import Any
from unittest import mock

import pytest
from celpy.evaluation import CELEvalError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.scheduler.ocm import cel, cel_cost
from placement.scheduler.ocm.cel import (
    _ACTIVATION,
    CelCompileError,
    _compile_expression,
    _Program,
    _scores_function,
    compile_cel_selector,
    to_cel,
)
from placement.scheduler.ocm.cel_closures import Evaluation
from placement.scheduler.ocm.cel_cost import CostLimitExceeded, CostTracker
from tests.scheduler.ocm.cel_cluster import no_scores

INT64_MAX = 2**63 - 1
KEYS = ["a", "b", "zone"]

json_scalars = st.one_of(
    st.sampled_from(["", "a", "ab", "east-1", "zone", "cpuAvailable"]),
    st.sampled_from([0, 1, -1, 3, 50, 51, INT64_MAX, -INT64_MAX - 1]),
    st.sampled_from([0.0, 2.5, -1.5, 50.0]),
    st.booleans(),
    st.none(),
)
json_values = st.one_of(
    json_scalars,
    st.lists(json_scalars, max_size=3),
    st.dictionaries(st.sampled_from(KEYS), json_scalars, max_size=2),
)
score_items = st.lists(
    st.dictionaries(st.sampled_from(["name", "value", "quantity"]), json_values, max_size=3).map(
        lambda item: item | {"name": item.get("name", "cpuAvailable")}
    ),
    max_size=4,
)

literals = st.sampled_from(
    ['"a"', '"east"', '"cpuAvailable"', "1", "3", "50", "-2", str(INT64_MAX), "true", "2.5"]
)
string_literals = st.sampled_from(['"a"', '"e"', '"east"', '""', '"zone"'])
cluster_reads = st.sampled_from(
    [
        'managedCluster.metadata.labels["a"]',
        "managedCluster.metadata.labels.b",
        "managedCluster.metadata.labels.zone",
        'managedCluster.status.capacity["cpu"]',
        "managedCluster.metadata.name",
        "managedCluster.metadata.labels[managedCluster.metadata.name]",
        'managedCluster.scores("demo")[0].value',
        'managedCluster.scores("demo")[1]["name"]',
    ]
)
item_reads = st.sampled_from(
    ["s.name", "s.value", 's["value"]', "s.quantity", "s.missing", "managedCluster.metadata.labels[s.name]"]
)
comparisons = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
arithmetic = st.sampled_from(["+", "-", "*", "/", "%"])


def terms(reads: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Boolean terms over `reads`: comparisons with literals, arithmetic, string functions, sizes."""
    value = st.one_of(reads, st.tuples(reads, arithmetic, literals).map(lambda t: f"({t[0]} {t[1]} {t[2]})"))
    return st.one_of(
        st.tuples(value, comparisons, literals).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        st.tuples(reads, st.sampled_from(["startsWith", "endsWith", "contains"]), string_literals).map(
            lambda t: f"{t[0]}.{t[1]}({t[2]})"
        ),
        st.tuples(reads, literals).map(lambda t: f"size({t[0]}) > {t[1]}"),
        st.tuples(reads, literals).map(lambda t: f"dyn({t[0]}) == {t[1]}"),
        st.tuples(reads, literals, literals).map(lambda t: f"{t[0]} in [{t[1]}, {t[2]}]"),
        st.tuples(reads, literals).map(lambda t: f"[{t[0]}, {t[1]}].exists(x, x == {t[1]})"),
        reads.map(lambda read: f"has({read.rsplit('.', 1)[0]}.zone)"),
    )


def logic(base: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.recursive(
        base,
        lambda inner: st.one_of(
            inner.map(lambda e: f"!({e})"),
            st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        ),
        max_leaves=4,
    )


scores = 'managedCluster.scores("demo")'
comprehensions = st.one_of(
    st.tuples(st.sampled_from(["exists", "all", "exists_one"]), logic(terms(item_reads))).map(
        lambda t: f"{scores}.{t[0]}(s, {t[1]})"
    ),
    logic(terms(item_reads)).map(lambda e: f"{scores}.filter(s, {e}).size() > 1"),
    st.tuples(item_reads, literals).map(lambda t: f"{scores}.map(s, {t[0]}).exists(v, v == {t[1]})"),
    st.tuples(logic(terms(item_reads)), item_reads).map(
        lambda t: f"size({scores}.map(s, {t[0]}, {t[1]})) == 1"
    ),
    string_literals.map(lambda p: f"managedCluster.metadata.labels.exists(k, k.startsWith({p}))"),
)
# `has()` of a selection on a computed value, which cel-go charges for the value's base
computed_has = st.sampled_from(
    ['has(managedCluster.scores("demo").zone)', "has(dyn(managedCluster.metadata).labels)"]
)
expressions = logic(st.one_of(terms(cluster_reads), comprehensions, computed_has))

clusters = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["a", "zone", "east-2"])},
            optional={"labels": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3)},
        )
    },
    optional={
        "status": st.fixed_dictionaries(
            {}, optional={"capacity": st.dictionaries(st.just("cpu"), json_values)}
        )
    },
)


def outcome(program: _Program, cluster: Any, items: list[dict[str, Any]] | None) -> tuple[Any, ...]:
    """What one evaluation gives: (kind, value, cost charged)."""

    def provider(name: str) -> list[dict[str, Any]]:
        if items is None:
            raise LookupError(name)
        return items

    tracker = CostTracker()
    run = Evaluation(tracker, {"scores": _scores_function(provider)}, _ACTIVATION)
    try:
        value = program.evaluate(cluster, run)
    except CostLimitExceeded:
        return ("limit", None, tracker.cost)
    except CELEvalError as error:
        return ("error", error.args, tracker.cost)
    except ValueError as error:
        return ("raised", str(error), tracker.cost)
    return ("value", (type(value), value), tracker.cost)


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)
@given(
    expression=expressions,
    cluster=clusters,
    items=st.one_of(st.none(), score_items),
    limit=st.sampled_from([3, 12, 40, cel_cost.PER_CALL_LIMIT]),
)
def test_closures_evaluate_as_the_interpreter(
    expression: str, cluster: dict[str, Any], items: list[dict[str, Any]] | None, limit: int
) -> None:
    try:
        program = _compile_expression(expression)
    except CelCompileError:
        return  # an ill-typed combination: neither path evaluates it
    assert program.closure is not None, expression
    interpreted = replace(program, closure=None)
    value = to_cel(cluster)
    with mock.patch.object(cel_cost, "PER_CALL_LIMIT", limit):
        assert outcome(program, value, items) == outcome(interpreted, value, items), expression


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    selected=st.lists(expressions, min_size=1, max_size=3),
    cluster=clusters,
    items=st.one_of(st.none(), score_items),
    budget=st.one_of(st.integers(0, 40), st.just(cel_cost.RUNTIME_BUDGET)),
)
def test_selectors_match_as_the_interpreter(
    selected: list[str], cluster: dict[str, Any], items: list[dict[str, Any]] | None, budget: int
) -> None:
    """The verdict of several expressions sharing one cluster's runtime budget."""
    try:
        selector = compile_cel_selector(selected)
    except CelCompileError:
        return
    arguments = (cluster, lambda name: items if items is not None else no_scores(name))
    with mock.patch.object(cel, "RUNTIME_BUDGET", budget):
        assert selector.matches(*arguments) == selector.interpreted().matches(*arguments)


@pytest.mark.parametrize(
    "expression",
    [
        'managedCluster.metadata.labels["a"] == "x" ? true : false',
        'managedCluster.metadata.labels.?a.orValue("") == ""',
        '{"a": 1}.a == 1',
        ".managedCluster.metadata.name == 1",
        "type(managedCluster) == map",
    ],
)
def test_other_forms_are_left_to_the_interpreter(expression: str) -> None:
    assert _compile_expression(expression).closure is None
