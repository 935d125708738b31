"""Kubernetes label selectors (`metav1.LabelSelector`), shared by OCM and Fleet.

Semantics follow apimachinery: `matchLabels` and `matchExpressions` are ANDed; `In` needs the key
present with one of the values, `NotIn` passes when the key is absent, `Exists`/`DoesNotExist` test
presence. An empty selector matches everything; callers decide what a missing (None) selector means,
because OCM and Fleet differ there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placement.scheduler.errors import ManifestError

IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)

# \Z, not $: Python's $ also matches before a final newline, where Go's (apimachinery's) does not.
_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


class SelectorError(ValueError):
    """A selector the API server would reject; `field` names the offending path."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}")
        self.field = field_path
        self.message = message


def qualified_name_error(key: str, *, part_lengths: bool = True) -> str | None:
    """Why `key` is not a Kubernetes qualified name (`[prefix/]name`), or None when it is. Without
    `part_lengths` only the characters are checked: OCM's taint keys have the pattern of a qualified
    name but a limit on the whole key only."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "prefix part must be non-empty"
    if prefix and ((part_lengths and len(prefix) > 253) or not _DNS_SUBDOMAIN.match(prefix)):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name:
        return "name part must be non-empty"
    if (part_lengths and len(name) > 63) or not _NAME_PART.match(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (at most 63 characters)"
        )
    return None


def _rfc1123_error(value: str, pattern: re.Pattern[str], max_length: int, consists_of: str) -> str | None:
    """apimachinery's two checks of an RFC 1123 name: its length, then its characters."""
    if len(value) > max_length:
        return f"must be no more than {max_length} characters"
    if not pattern.match(value):
        return f"a lowercase RFC 1123 {consists_of}, and must start and end with an alphanumeric character"
    return None


def dns_subdomain_error(value: str) -> str | None:
    """Why `value` is not a lowercase RFC 1123 subdomain (apimachinery IsDNS1123Subdomain), or None."""
    return _rfc1123_error(
        value, _DNS_SUBDOMAIN, 253, "subdomain must consist of lower case alphanumeric characters, '-' or '.'"
    )


def dns_label_error(value: str) -> str | None:
    """Why `value` is not a lowercase RFC 1123 label (apimachinery IsDNS1123Label: namespaces), or None."""
    return _rfc1123_error(
        value, _DNS_LABEL, 63, "label must consist of lower case alphanumeric characters or '-'"
    )


def label_value_error(value: str) -> str | None:
    """Why `value` is not a valid label value, or None when it is."""
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (at most 63 characters)"
        )
    return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `matchExpressions` entry."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == IN:
            return self.key in labels and labels[self.key] in self.values
        if self.operator == NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == EXISTS:
            return self.key in labels
        return self.key not in labels

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        return out


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed, validated `metav1.LabelSelector`."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        return all(requirement.matches(labels) for requirement in self.match_expressions)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.match_labels:
            out["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            out["matchExpressions"] = [r.to_dict() for r in self.match_expressions]
        return out

    def describe(self) -> str:
        """The selector in kubectl's `-l` syntax, for explanations."""
        parts = [f"{k}={v}" for k, v in self.match_labels]
        for r in self.match_expressions:
            if r.operator == EXISTS:
                parts.append(r.key)
            elif r.operator == DOES_NOT_EXIST:
                parts.append(f"!{r.key}")
            else:
                verb = "in" if r.operator == IN else "notin"
                parts.append(f"{r.key} {verb} ({','.join(r.values)})")
        return ",".join(parts) or "<everything>"


def parse_requirement(raw: Any, field_path: str) -> Requirement:
    """Parse and validate one matchExpressions entry as apimachinery does."""
    if not isinstance(raw, Mapping):
        raise SelectorError(field_path, "must be an object with key, operator and values")
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise SelectorError(f"{field_path}.key", "is required")
    if (why := qualified_name_error(key)) is not None:
        raise SelectorError(f"{field_path}.key", f"invalid value {key!r}: {why}")
    operator = raw.get("operator")
    if operator not in OPERATORS:
        raise SelectorError(f"{field_path}.operator", f'"{operator}" is not a valid label selector operator')
    values = raw.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError(f"{field_path}.values", "must be a list of strings")
    if operator in (IN, NOT_IN) and not values:
        raise SelectorError(f"{field_path}.values", "for 'In', 'NotIn' operators, values set can't be empty")
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        raise SelectorError(
            f"{field_path}.values", "values set must be empty for 'Exists', 'DoesNotExist' operators"
        )
    for index, value in enumerate(values):
        if (why := label_value_error(value)) is not None:
            raise SelectorError(f"{field_path}.values[{index}]", f"invalid value {value!r}: {why}")
    return Requirement(key, operator, tuple(values))


# --- selectors as the API server stores them -------------------------------------------------------
#
# A CRD schema checks only the JSON types of a selector (and that key and operator are present), so a hub
# can hold one with an unknown operator, values with Exists or a malformed key. Upstream controllers meet
# the problem only when apimachinery's `metav1.LabelSelectorAsSelector` converts it, and each decides what
# that means (OCM: Misconfigured; KubeFleet: an aborted cycle). The functions below keep that split.


def _schema_error(raw: Any, field_path: str) -> SelectorError | None:
    """What the API server's structural schema refuses in a selector (types, required key/operator)."""
    if not isinstance(raw, Mapping):
        return SelectorError(field_path, "must be an object")
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping) or not all(isinstance(v, str) for v in match_labels.values()):
        return SelectorError(f"{field_path}.matchLabels", "must be a map of strings")
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        return SelectorError(f"{field_path}.matchExpressions", "must be a list")
    for index, item in enumerate(expressions):
        path = f"{field_path}.matchExpressions[{index}]"
        if not isinstance(item, Mapping):
            return SelectorError(path, "must be an object with key, operator and values")
        for name in ("key", "operator"):
            if not isinstance(item.get(name), str):
                return SelectorError(f"{path}.{name}", "Required value: must be a string")
        values = item.get("values") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return SelectorError(f"{path}.values", "must be a list of strings")
    return None


def _go_quote(text: str) -> str:
    """Go's `%q` of a string, as apimachinery's messages show values."""
    return json.dumps(text, ensure_ascii=False)


def _requirement_problems(key: str, operator: str, values: list[str]) -> list[str]:
    """apimachinery `labels.NewRequirement`'s field errors, in its order and shape."""
    problems = []
    if (why := qualified_name_error(key)) is not None:
        problems.append(f"key: Invalid value: {_go_quote(key)}: {why}")
    if operator in (IN, NOT_IN) and not values:
        # the values are copied into a nil slice first, so an empty list prints as null
        problems.append("values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty")
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        shown = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
        problems.append(
            f"values: Invalid value: {shown}: values set must be empty for exists and does not exist"
        )
    for index, value in enumerate(values):
        if (why := label_value_error(value)) is not None:
            problems.append(f"values[{index}][{key}]: Invalid value: {_go_quote(value)}: {why}")
    return problems


def _aggregate(problems: list[str]) -> str:
    """How Go prints an aggregate error: one error as itself, several as a bracketed list."""
    return problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"


def selector_conversion_error(raw: Mapping[str, Any]) -> str | None:
    """The error `metav1.LabelSelectorAsSelector` returns for a schema-valid selector, or None.

    The first failing requirement wins: matchLabels first (in key order; Go's map order is random, so
    with several bad labels upstream may name another one), then matchExpressions in order.
    """
    for key, value in sorted((raw.get("matchLabels") or {}).items()):
        if problems := _requirement_problems(key, "=", [value]):
            return _aggregate(problems)
    for item in raw.get("matchExpressions") or []:
        operator = item["operator"]
        if operator not in OPERATORS:
            return f"{_go_quote(operator)} is not a valid label selector operator"
        if problems := _requirement_problems(item["key"], operator, list(item.get("values") or [])):
            return _aggregate(problems)
    return None


@dataclass(frozen=True, slots=True)
class SelectorProblem:
    """A stored selector apimachinery cannot convert: where it is in the manifest, and the error."""

    field: str
    message: str


def parse_stored_label_selector(raw: Any, field_path: str) -> tuple[LabelSelector, SelectorProblem | None]:
    """A selector as a hub may store it: `(selector, None)`, or `(empty selector, problem)` when
    apimachinery cannot convert it. Raises SelectorError only for what the schema refuses."""
    if raw is None:
        return LabelSelector(), None
    if (schema_error := _schema_error(raw, field_path)) is not None:
        raise schema_error
    if (error := selector_conversion_error(raw)) is not None:
        return LabelSelector(), SelectorProblem(field_path, error)
    return parse_label_selector(raw, field_path), None


def parse_stored_requirements(
    raw: Any, field_path: str
) -> tuple[tuple[Requirement, ...], SelectorProblem | None]:
    """`parse_stored_label_selector` for the matchExpressions list of a selector at `field_path` that has
    no matchLabels (OCM's claimSelector)."""
    selector, error = parse_stored_label_selector({"matchExpressions": raw}, field_path)
    return selector.match_expressions, error


def parse_requirements(raw: Iterable[Any] | None, field_path: str) -> tuple[Requirement, ...]:
    """Parse a list of matchExpressions (also OCM's claimSelector.matchExpressions)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SelectorError(field_path, "must be a list")
    return tuple(parse_requirement(item, f"{field_path}[{i}]") for i, item in enumerate(raw))


def parse_label_selector(raw: Any, field_path: str = "labelSelector") -> LabelSelector:
    """Parse and validate a label selector mapping; `{}` (or None) is the empty selector."""
    if raw is None:
        return LabelSelector()
    if not isinstance(raw, Mapping):
        raise SelectorError(field_path, "must be an object")
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise SelectorError(f"{field_path}.matchLabels", "must be a map of strings")
    for key, value in match_labels.items():
        if not isinstance(value, str):
            raise SelectorError(f"{field_path}.matchLabels.{key}", "must be a string")
        if (why := qualified_name_error(key)) is not None:
            raise SelectorError(f"{field_path}.matchLabels", f"invalid key {key!r}: {why}")
        if (why := label_value_error(value)) is not None:
            raise SelectorError(f"{field_path}.matchLabels.{key}", f"invalid value {value!r}: {why}")
    expressions = parse_requirements(raw.get("matchExpressions"), f"{field_path}.matchExpressions")
    return LabelSelector(tuple(sorted(match_labels.items())), expressions)


def parse_optional_label_selector(raw: Any, field_path: str) -> LabelSelector | None:
    """Parse a manifest's selector field, raising ManifestError; a missing (None) selector stays None.

    Callers decide what None means (Fleet affinity terms: no label check; staged-update stages: no cluster).
    """
    if raw is None:
        return None
    try:
        return parse_label_selector(raw, field_path)
    except SelectorError as exc:
        raise ManifestError(exc.field, exc.message) from exc


# --- kubectl's selector syntax (`a=b,c!=d,e in (f,g),h notin (i),j,!k`), as in `-l` and `?labelSelector=`

_QUERY_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_QUERY_SET = re.compile(rf"^({_QUERY_KEY})\s+(in|notin)\s*\((.*)\)$")
_QUERY_EQUALITY = re.compile(rf"^({_QUERY_KEY})\s*(==|=|!=)\s*(.*)$")
_QUERY_NOT_EXISTS = re.compile(rf"^!\s*({_QUERY_KEY})$")
_QUERY_EXISTS = re.compile(rf"^({_QUERY_KEY})$")


def _split_query_terms(text: str) -> list[str]:
    """Split on commas that are not inside `( ... )` value sets."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return parts


def _query_requirement_checked(key: str, values: tuple[str, ...], operator: str) -> Requirement:
    if (why := qualified_name_error(key)) is not None:
        raise SelectorError("labelSelector", f"invalid key {key!r}: {why}")
    for value in values:
        if (why := label_value_error(value)) is not None:
            raise SelectorError("labelSelector", f"invalid value {value!r}: {why}")
    return Requirement(key, operator, values)


def _query_requirement(term: str) -> Requirement:
    if match := _QUERY_SET.match(term):
        key, verb, raw_values = match.groups()
        values = tuple(sorted({v.strip() for v in raw_values.split(",")}))
        return _query_requirement_checked(key, values, IN if verb == "in" else NOT_IN)
    if match := _QUERY_NOT_EXISTS.match(term):
        return _query_requirement_checked(match.group(1), (), DOES_NOT_EXIST)
    if match := _QUERY_EQUALITY.match(term):
        key, operator, value = match.groups()
        return _query_requirement_checked(key, (value.strip(),), NOT_IN if operator == "!=" else IN)
    if match := _QUERY_EXISTS.match(term):
        return _query_requirement_checked(match.group(1), (), EXISTS)
    raise SelectorError("labelSelector", f"unable to parse requirement: {term!r}")


def parse_selector_query(text: str | None) -> LabelSelector:
    """Parse a `labelSelector` query parameter; empty or None selects everything."""
    if not text or not text.strip():
        return LabelSelector()
    terms = [term.strip() for term in _split_query_terms(text)]
    if any(not term for term in terms):
        raise SelectorError("labelSelector", f"empty requirement in {text!r}")
    return LabelSelector(match_expressions=tuple(_query_requirement(term) for term in terms))


def patched_mask(
    mask: np.ndarray, selector: LabelSelector, labels: Mapping[int, Mapping[str, str]]
) -> np.ndarray:
    """A selector's read-only `mask` with the clusters at these positions matched again on their new
    labels; `mask` itself is left as it is (a reader may hold it)."""
    if not labels:
        return mask
    patched = mask.copy()
    for position, own in labels.items():
        patched[position] = selector.matches(own)
    patched.flags.writeable = False
    return patched
