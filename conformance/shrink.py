"""Shrinking a disagreeing case to a minimal one that still disagrees the same way.

Greedy delta debugging in three passes, repeated until nothing more can go or the budget of checks is
spent: whole manifests (in chunks, then one by one), then list items and label entries anywhere in a
manifest (cluster labels, claims, taints, predicates, expressions, tolerations, prioritizers...), then
any other field. The check decides what is kept: a removal that makes either side refuse the case, or
that changes the kind of difference, fails the check and is undone.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from conformance.cases import Case

Check = Callable[[Case], bool]
Path = tuple[str | int, ...]

# the checks one shrink may spend (each runs both schedulers once)
DEFAULT_MAX_CHECKS = 400
# what makes a manifest an object at all, and what the CRD schemas require of it (every kind's spec,
# a MemberCluster's identity with all its fields): never removed, or a case our parser refuses for a
# missing required field would pass for the same disagreement as the original one
_IDENTITY: frozenset[Path] = frozenset(
    {("apiVersion",), ("kind",), ("metadata",), ("metadata", "name"), ("spec",)}
)
_KEPT_SUBTREES: tuple[Path, ...] = (("spec", "identity"),)
# string maps whose entries count as list items (one label is one item)
_ENTRY_MAPS = frozenset({"labels", "annotations"})


class Shrinker:
    """Applies `check` (True while the case still disagrees the same way) at most `max_checks` times."""

    def __init__(self, check: Check, max_checks: int = DEFAULT_MAX_CHECKS) -> None:
        self.check = check
        self.max_checks = max_checks
        self.checks = 0

    @property
    def spent(self) -> bool:
        return self.checks >= self.max_checks

    def _holds(self, case: Case) -> bool:
        if self.spent:
            return False
        self.checks += 1
        return self.check(case)

    def shrink(self, case: Case) -> Case:
        """The smallest case found that still passes the check (`case` itself if nothing can go)."""
        while not self.spent:
            before = case
            case = self._drop_manifests(case)
            case = self._drop_paths(case, _item_paths)
            case = self._drop_paths(case, _field_paths)
            if case == before:
                break
        return case

    def _drop_manifests(self, case: Case) -> Case:
        """Delta debugging over the manifests: drop chunks of halving size while the check holds."""
        manifests = case["manifests"]
        parts = 2
        while len(manifests) >= 2 and not self.spent:
            size = -(-len(manifests) // parts)
            for start in range(0, len(manifests), size):
                trial = manifests[:start] + manifests[start + size :]
                if self._holds({**case, "manifests": trial}):
                    manifests = trial
                    parts = max(parts - 1, 2)
                    break
            else:
                if parts >= len(manifests):
                    break
                parts = min(parts * 2, len(manifests))
        return {**case, "manifests": manifests}

    def _drop_paths(self, case: Case, paths: Callable[[Case], list[tuple[int, Path]]]) -> Case:
        """Try removing each path once, outermost first.

        After a removal the listing is taken again and the walk goes on at the same position: the paths
        before it are unchanged and the next one there is the first after what was removed.
        """
        position = 0
        listing = paths(case)
        while position < len(listing) and not self.spent:
            trial = _without(case, *listing[position])
            if self._holds(trial):
                case = trial
                listing = paths(case)
            else:
                position += 1
        return case


def shrink(case: Case, check: Check, max_checks: int = DEFAULT_MAX_CHECKS) -> Case:
    """`case` made as small as `check` allows, spending at most `max_checks` checks."""
    return Shrinker(check, max_checks).shrink(case)


def _walk(node: Any, path: Path) -> Iterator[tuple[Path, bool]]:
    """Every path below `node` in preorder, with whether it is an item (list element or label entry)."""
    if isinstance(node, dict):
        entries = bool(path) and path[-1] in _ENTRY_MAPS
        for key, child in node.items():
            yield (*path, key), entries
            yield from _walk(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield (*path, index), True
            yield from _walk(child, (*path, index))


def _item_paths(case: Case) -> list[tuple[int, Path]]:
    return [
        (number, path)
        for number, manifest in enumerate(case["manifests"])
        for path, item in _walk(manifest, ())
        if item
    ]


def _field_paths(case: Case) -> list[tuple[int, Path]]:
    return [
        (number, path)
        for number, manifest in enumerate(case["manifests"])
        for path, item in _walk(manifest, ())
        if not item
        and path not in _IDENTITY
        and not any(path[: len(kept)] == kept for kept in _KEPT_SUBTREES)
    ]


def _without(case: Case, number: int, path: Path) -> Case:
    """A copy of `case` with the value at `path` of manifest `number` removed."""
    manifest = copy.deepcopy(case["manifests"][number])
    parent: Any = manifest
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    manifests = list(case["manifests"])
    manifests[number] = manifest
    return {**case, "manifests": manifests}
