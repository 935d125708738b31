"""cel-go's optional syntax in CEL selectors: `a.?b`, `m[?k]`, `[?x]`, `{?k: v}` and optional values.

Every expected result was produced by upstream OCM (`helpers.NewEnv` + `NewCELSelector`, cel-go with
`cel.OptionalTypes()`) on the test cluster; `None` means upstream refuses the expression.
"""

import pytest

from tests.scheduler.ocm.cel_cluster import assert_as_upstream

UPSTREAM_RESULTS = [
    # optional selection, and chains that stay optional after it
    ('managedCluster.?metadata.?labels.?env.orValue("none") == "prod"', True),
    ('managedCluster.?metadata.labels.env.orValue("none") == "none"', False),
    ('managedCluster.?metadata.nothere.env.orValue("none") == "none"', True),
    ("managedCluster . ? metadata . ? name == optional.of(managedCluster.metadata.name)", True),
    ("managedCluster.?metadata.?name.value() == managedCluster.metadata.name", True),
    ('{"a": 1}.?a == optional.of(1)', True),
    # selecting on an optional value
    ('optional.of({"a": 1}).a.value() == 1', True),
    ('optional.of({"a": 1}).b.hasValue() == false', True),
    ('optional.of({"a": 1})["a"].value() == 1', True),
    # optional indexing
    ('{"a": 1}[?"a"].value() == 1', True),
    ('{"a": 1}[?"b"].hasValue() == false', True),
    ("[1, 2][?5].hasValue() == false", True),
    ("[1, 2][?1].value() == 2", True),
    ('managedCluster.metadata[?"labels"].env == "prod"', False),
    ('managedCluster.metadata[?"labels"].?env.orValue("") == "prod"', True),
    # optional list elements and map entries, trailing commas
    ("[?optional.none(), 1, ?optional.of(2)] == [1, 2]", True),
    ('{?"a": optional.none(), "b": 2} == {"b": 2}', True),
    ('{?"a": optional.of(1)} == {"a": 1}', True),
    ("[1,2,][0] == 1", True),
    ('{"a":1,}.a == 1', True),
    ("[?managedCluster.metadata] == []", False),
    # optional values and macros
    ("optional.none().or(optional.of(3)).value() == 3", True),
    ("optional.of(1).optMap(x, x + 1).value() == 2", True),
    ("optional.none().optMap(x, x + 1).hasValue()", False),
    ("optional.of([1]).optFlatMap(x, x[?0]).hasValue()", True),
    ("optional.of(1) == optional.of(1)", True),
    ('optional.ofNonZeroValue("").hasValue()', False),
    ("[1,2].first().value() == 1", True),
    ("[1,2].last().value() == 2", True),
    ("[].first().hasValue()", False),
    ("optional.unwrap([optional.of(1), optional.none()]) == [1]", True),
    ("[optional.of(1)].unwrapOpt() == [1]", True),
    ("dyn([1]).unwrapOpt() == [1]", False),
    # the syntax belongs to the grammar: inside a string it is text
    ('"a.?b" == "a.?b"', True),
    # refused: has() needs a plain selection, `?` entries need optional values, orValue a matching type
    ("has(managedCluster.?metadata)", None),
    ("[?1] == [1]", None),
    ('{?"a": 1}.size() == 1', None),
    ('optional.of(1).orValue("x") == 1', None),
    ("[1].unwrapOpt() == [1]", None),
]


@pytest.mark.parametrize(("expression", "expected"), UPSTREAM_RESULTS)
def test_optional_syntax_evaluates_as_upstream(expression: str, expected: bool | None) -> None:
    assert_as_upstream(expression, expected, "^compilation failed: ")
