"""The `labelSelector` query syntax (`a=b,c!=d,e in (f,g),h notin (i),j,!k`) parsed into scheduler selectors.

Matching reuses `placement.scheduler.labels`, so the hub and the scheduler cannot disagree on semantics.
"""

import re

from placement.scheduler.labels import (
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    NOT_IN,
    LabelSelector,
    Requirement,
    SelectorError,
    label_value_error,
    qualified_name_error,
)

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s*\((.*)\)$")
_EQUALITY = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*(.*)$")
_NOT_EXISTS = re.compile(rf"^!\s*({_KEY})$")
_EXISTS = re.compile(rf"^({_KEY})$")


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside `( ... )` value sets."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return parts


def _checked(key: str, values: tuple[str, ...], operator: str) -> Requirement:
    if (why := qualified_name_error(key)) is not None:
        raise SelectorError("labelSelector", f"invalid key {key!r}: {why}")
    for value in values:
        if (why := label_value_error(value)) is not None:
            raise SelectorError("labelSelector", f"invalid value {value!r}: {why}")
    return Requirement(key, operator, values)


def _requirement(term: str) -> Requirement:
    if match := _SET.match(term):
        key, verb, raw_values = match.groups()
        values = tuple(sorted({v.strip() for v in raw_values.split(",")}))
        return _checked(key, values, IN if verb == "in" else NOT_IN)
    if match := _NOT_EXISTS.match(term):
        return _checked(match.group(1), (), DOES_NOT_EXIST)
    if match := _EQUALITY.match(term):
        key, operator, value = match.groups()
        return _checked(key, (value.strip(),), NOT_IN if operator == "!=" else IN)
    if match := _EXISTS.match(term):
        return _checked(match.group(1), (), EXISTS)
    raise SelectorError("labelSelector", f"unable to parse requirement: {term!r}")


def parse_selector_query(text: str | None) -> LabelSelector:
    """Parse a `labelSelector` query parameter; empty or None selects everything."""
    if not text or not text.strip():
        return LabelSelector()
    terms = [term.strip() for term in _split_top_level(text)]
    if any(not term for term in terms):
        raise SelectorError("labelSelector", f"empty requirement in {text!r}")
    return LabelSelector(match_expressions=tuple(_requirement(term) for term in terms))
