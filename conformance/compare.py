"""Comparing the oracle's result with ours, one line per differing field.

Both results are `{"placements": [verdict, ...]}` or `{"error": "..."}` (the oracle also writes an
empty `error` and `elapsedNs`, which are not compared). A refusal on one side only is a difference;
a refusal on both sides is agreement, whatever the messages say. The same holds for a verdict's own
`error` (a Fleet cycle that aborted): whether it is set is compared, not its words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# the field a refusal of the whole case is reported under
CASE_ERROR = "error"
# how many field names of a difference's path make its kind
KIND_DEPTH = 3


@dataclass(frozen=True, slots=True)
class Difference:
    """One field whose value differs: where (placement and field path) and the two values."""

    placement: str
    path: tuple[str, ...]
    upstream: Any
    ours: Any

    @property
    def kind(self) -> str:
        """What differs, for the shrinker to keep: the field path without list positions, to three names
        (`decisions.groupName`, `scores.Balance.c1`, `bindings.clusterScore.affinityScore`, `feasible`,
        `error`). A whole list that differs in length is its own kind (`decisions`), so shrinking cannot
        drift from one difference to another."""
        names = [part for part in self.path if not part.startswith("[")]
        return ".".join(names[:KIND_DEPTH]) if names else CASE_ERROR

    def __str__(self) -> str:
        where = "".join(part if part.startswith("[") else f".{part}" for part in self.path).lstrip(".")
        prefix = f"{self.placement}: {where}" if where else self.placement
        return f"{prefix}: upstream {_show(self.upstream)}, ours {_show(self.ours)}"


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def case_error(result: Mapping[str, Any]) -> str | None:
    """The reason a side refused the whole case, or None (an empty oracle `error` is no refusal)."""
    error = result.get(CASE_ERROR)
    return str(error) if error else None


def compare(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Difference]:
    """Every difference between the oracle's result (`expected`) and ours (`actual`)."""
    upstream_error, our_error = case_error(expected), case_error(actual)
    if upstream_error or our_error:
        if upstream_error and our_error:
            return []
        return [Difference("case", (), upstream_error, our_error)]
    upstream, ours = expected.get("placements") or [], actual.get("placements") or []
    if [_label(v) for v in upstream] != [_label(v) for v in ours]:
        return [Difference("case", ("placements",), [_label(v) for v in upstream], [_label(v) for v in ours])]
    found: list[Difference] = []
    for theirs, mine in zip(upstream, ours, strict=True):
        label = _label(theirs)
        for key in {**theirs, **mine}:
            if key == CASE_ERROR:
                _compare_errors(label, theirs.get(key), mine.get(key), found)
            else:
                _walk(label, (key,), theirs.get(key), mine.get(key), found)
    return found


def _compare_errors(label: str, upstream: Any, ours: Any, found: list[Difference]) -> None:
    """Whether a cycle aborted is compared, not why: each side words its errors its own way."""
    if bool(upstream) != bool(ours):
        found.append(Difference(label, (CASE_ERROR,), upstream, ours))


def differences(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """`compare` as readable lines, e.g. `Placement web/frontend: scores.Balance.c1: upstream 100, ours 0`."""
    return [str(difference) for difference in compare(expected, actual)]


def _label(verdict: Mapping[str, Any]) -> str:
    namespace = verdict.get("namespace")
    name = f"{namespace}/{verdict.get('name')}" if namespace else str(verdict.get("name"))
    return f"{verdict.get('kind')} {name}"


def _walk(label: str, path: tuple[str, ...], upstream: Any, ours: Any, found: list[Difference]) -> None:
    """Descend into objects key by key and into lists of equal length item by item; report leaves."""
    if isinstance(upstream, dict) and isinstance(ours, dict):
        for key in {**upstream, **ours}:
            _walk(label, (*path, str(key)), upstream.get(key), ours.get(key), found)
        return
    if isinstance(upstream, list) and isinstance(ours, list) and len(upstream) == len(ours):
        for index, (theirs, mine) in enumerate(zip(upstream, ours, strict=True)):
            _walk(label, (*path, f"[{index}]"), theirs, mine, found)
        return
    # JSON has one number type (25 and 25.0 agree), but true is no number
    if upstream != ours or isinstance(upstream, bool) is not isinstance(ours, bool):
        found.append(Difference(label, path, upstream, ours))
