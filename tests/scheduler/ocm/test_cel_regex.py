"""Regular expressions in CEL predicates follow RE2, as Go's regexp does upstream.

Every expected result was produced by upstream (OCM's `helpers.NewEnv` + `NewCELSelector` through the
conformance oracle). `None` means upstream refuses the expression: a constant pattern of `find` or
`findAll` is compiled when the program is built.
"""

import pytest

from tests.scheduler.ocm.cel_cluster import assert_as_upstream

# a cluster named as the last expressions expect
CLUSTER: dict[str, object] = {"metadata": {"name": "c1"}}


UPSTREAM_RESULTS = [
    # `$` is the end of the text only, and \d \w are ASCII
    ("'abc\\n'.find('c$') == 'c'", False),
    ("'abc\\n'.matches('^abc$')", False),
    ("'٣'.find('\\\\d') == ''", True),
    ("'é'.find('\\\\w') == ''", True),
    # RE2 syntax Python's re lacks or reads differently
    ("'a+b'.find('\\\\Q+\\\\E') == '+'", True),
    ("'\\\\z'.find('\\\\z') == ''", True),
    ("'a{,2}'.find('a{,2}') == 'a{,2}'", True),
    ("'abc'.matches('\\\\Q.\\\\E') == false", True),
    # Go's FindAllString skips an empty match right after the previous match
    ("'abab'.findAll('(ab)*') == ['abab', '']", False),
    ("'abab'.findAll('(ab)*') == ['abab']", True),
    ("'x'.findAll('') == ['', '']", True),
    # a pattern RE2 refuses: a constant one of find is refused at build time, matches fails at run time
    ("'abc'.find('(?=a)') == ''", None),
    ("'abc'.matches('[')", False),
    ("!'abc'.matches('[')", False),
    ("managedCluster.metadata.name.matches('^c[0-9]$')", True),
]


@pytest.mark.parametrize(("expression", "expected"), UPSTREAM_RESULTS)
def test_regex_as_upstream(expression: str, expected: bool | None) -> None:
    assert_as_upstream(expression, expected, cluster=CLUSTER)
