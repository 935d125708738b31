"""CEL selectors are type-checked when they compile, as cel-go's checker does in OCM's `env.Compile`.

`managedCluster` is a `map(string, dyn)`, so what is read from it is `dyn` and checks at run time; what
the checker can see is wrong (a literal of the wrong type, a function no overload accepts, a wrong
number of arguments) makes the placement misconfigured. Every expectation below is upstream's verdict:
True/False is the result of a selector that compiles, None a refused one.
"""

import pytest

from placement.scheduler.ocm.cel import CelCompileError, compile_cel_selector
from tests.scheduler.ocm.cel_cluster import assert_as_upstream

UPSTREAM_RESULTS = [
    # operators need operands of one type, with no implicit numeric conversion
    ('1 + "a" == "1a"', None),
    ("1 == 1.0", None),
    ("1 < 1.0", None),
    ("1u < 2", None),
    ("1 + 1u == 2", None),
    ('"a" == null', None),
    ('-"a" == 1', None),
    ("!1", None),
    ("1 && true", None),
    ('true ? 1 : "a"', None),
    ("[1, 2] + ['a'] == [1]", None),
    ("[1, 2] == [1.0]", None),
    ('{"a": 1} == {"a": "b"}', None),
    ('1 in ["a"]', None),
    # functions: argument types and counts, member or global form
    ("size(1) == 1", None),
    ('"a".startsWith(1)', None),
    ('"a".contains("a", "b")', None),
    ('"a".matches(1)', None),
    ("int(true) == 1", None),
    ('managedCluster.scores("x", 1).size() == 0', None),
    ('parseJSON("1") == 1', None),
    ('[1, 2].join(",") == "a,b"', None),
    ('["a"].sum() == "a"', None),
    ("[[1], [2]].isSorted()", None),
    ('semver("1.0.0") < semver("1.0.0")', None),
    ('string(semver("1.0.0")) == "1.0.0"', None),
    ('isSemver("1.0.0", true)', None),
    ('quantity("1").isLessThan(1)', None),
    ('quantity("-1").sign() == -1', None),
    ("managedCluster.metadata.name.size() == 1u", None),
    # selection and indexing need maps (or dyn), lists take int indexes
    ("1.a", None),
    ('"abc".a', None),
    ("[1][0u] == 1", None),
    ('{"a": 1}[1] == 1', None),
    ("has([1].a)", None),
    # comprehensions range over lists, maps or dyn, and their predicates are bool
    ("[1,2].all(x, x)", None),
    ("1.all(x, true)", None),
    ("[1].filter(x, x).size() == 1", None),
    ("[1].map(x, 1, x).size() == 1", None),
    # what checks: dyn, heterogeneous literals, library types, any output type
    ("managedCluster.x == null", False),
    ("managedCluster.metadata.all(k, k)", False),
    ("managedCluster.x && true", False),
    ('[1, "a"].size() == 2', True),
    ('{"a": 1, 1: "b"}.size() == 2', True),
    ("dyn(1) + 1u == 2u", False),
    ("type(1) == int", True),
    ("int == string", False),
    ('string(ip("1.2.3.4")) == "1.2.3.4"', True),
    ('cidr("10.0.0.0/8").containsIP(ip("10.0.0.1"))', True),
    ('quantity("1").add(1).isInteger()', True),
    ('sign(quantity("-1")) == -1', True),
    ('format.named("dns1123Label").value().validate("x").hasValue()', False),
    ('"a".parseJSON() == 1', False),
    ("[1].map(x, x == 1, x).size() == 1", True),
    ('{"a": 1}.map(k, k).size() == 1', True),
    ("managedCluster", False),
    ('timestamp("2020-01-01T00:00:00Z").getFullYear() == 2020', True),
]


@pytest.mark.parametrize(("expression", "expected"), UPSTREAM_RESULTS)
def test_types_are_checked_as_upstream(expression: str, expected: bool | None) -> None:
    assert_as_upstream(expression, expected, "^compilation failed: ERROR: <input>:")


def test_no_matching_overload_names_the_function_and_argument_types() -> None:
    with pytest.raises(
        CelCompileError, match=r"found no matching overload for '_\+_' applied to '\(int, string\)'"
    ):
        compile_cel_selector(['managedCluster.metadata.name != "" ', '1 + "a" == "1a"'])
