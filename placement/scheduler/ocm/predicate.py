"""The Predicate filter: predicates are ORed; each ANDs labelSelector, claimSelector and CEL."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placement.scheduler.labels import LabelSelector
from placement.scheduler.ocm.cel import CelCompileError, CelSelector, ScoresProvider, compile_cel_selector
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.status import MISCONFIGURED, ScheduleStatus
from placement.scheduler.ocm.types import ClusterPredicate, Placement

PLUGIN = "Predicate"


@dataclass(frozen=True, slots=True)
class CompiledPredicate:
    """A predicate with its CEL expressions compiled once per placement (None when there are none).

    `cel_verdicts` keeps what the filter evaluated (inventory position -> matched) so explaining a
    filtered cluster does not run the same CEL again; it lives as long as one scheduling run.
    """

    predicate: ClusterPredicate
    cel: CelSelector | None
    cel_verdicts: dict[int, bool] = field(default_factory=dict)


class PredicateMisconfigured(ValueError):
    """A predicate upstream cannot build: a selector apimachinery cannot convert, or CEL that does not
    compile; str() is the message of the Misconfigured status."""


def compile_predicates(predicates: Sequence[ClusterPredicate]) -> list[CompiledPredicate]:
    """Build every predicate in spec order, its selectors before its CEL (upstream NewClusterSelector,
    then Compile); the first failure raises PredicateMisconfigured."""
    compiled = []
    for predicate in predicates:
        if predicate.selector_problem is not None:
            raise PredicateMisconfigured(predicate.selector_problem.message)
        try:
            cel = compile_cel_selector(predicate.cel_expressions) if predicate.cel_expressions else None
        except CelCompileError as exc:
            raise PredicateMisconfigured(str(exc)) from exc
        compiled.append(CompiledPredicate(predicate, cel))
    return compiled


def _cel_input(inventory: OcmInventory, position: int) -> tuple[Mapping[str, Any], ScoresProvider]:
    """The cluster at `position` as CEL reads it: its object and its AddOnPlacementScores."""
    cluster = inventory.clusters[position]
    return cluster.to_unstructured(), lambda resource: inventory.add_on_score_items(cluster.name, resource)


def _cel_matches(compiled: CompiledPredicate, inventory: OcmInventory, position: int) -> bool:
    if compiled.cel is None:
        return True
    if position not in compiled.cel_verdicts:
        compiled.cel_verdicts[position] = compiled.cel.matches(*_cel_input(inventory, position))
    return compiled.cel_verdicts[position]


def _cel_mask(
    compiled: CompiledPredicate, selector: CelSelector, inventory: OcmInventory, positions: np.ndarray
) -> np.ndarray:
    """The CEL verdicts of the clusters at `positions`: one evaluation per distinct projection of what
    the expressions read, the projections coded once per inventory for every placement reading alike and
    each code's verdict kept with them for every later run of the same expressions (a verdict depends
    on nothing but the projection, its costs included)."""
    if selector.reads.name_reachable:
        verdicts = selector.matches_each(_cel_input(inventory, int(position)) for position in positions)
        matched = np.asarray(verdicts.matched, dtype=bool)
    else:
        codes = inventory.projection_codes(
            selector.reads, lambda held, position: selector.projection(*_cel_input(held, position))
        )
        known = inventory.projection_verdicts(selector.reads, selector)
        distinct, first, expand = np.unique(codes[positions], return_index=True, return_inverse=True)
        for code, position in zip(distinct.tolist(), positions[first].tolist(), strict=True):
            if code not in known:
                known[code] = selector.matches(*_cel_input(inventory, position))
        matched = np.fromiter((known[code] for code in distinct.tolist()), dtype=bool, count=len(distinct))
        matched = matched[expand]
    compiled.cel_verdicts.update(zip(positions.tolist(), matched.tolist(), strict=True))
    return matched


def predicate_mask(
    predicates: Sequence[CompiledPredicate], inventory: OcmInventory, candidates: np.ndarray
) -> np.ndarray:
    """Which `candidates` (inventory positions) match any predicate, aligned with `candidates`."""
    matched = np.zeros(len(candidates), dtype=bool)
    for compiled in predicates:
        labels = inventory.labels.selector_mask(compiled.predicate.label_selector)
        claims = inventory.claims.selector_mask(compiled.predicate.claim_label_selector)
        # CEL runs only where the cheap parts pass and no earlier predicate matched (upstream breaks early)
        passing = labels[candidates] & claims[candidates] & ~matched
        if compiled.cel is not None:
            offsets = np.flatnonzero(passing)
            passing[offsets] = _cel_mask(compiled, compiled.cel, inventory, candidates[offsets])
        matched |= passing
    return matched


@dataclass(frozen=True, slots=True)
class PredicateFilterResult:
    """Positions left by the filter (None when Misconfigured stopped it) and the compiled predicates."""

    filtered: np.ndarray | None
    status: ScheduleStatus
    predicates: list[CompiledPredicate]


def filter_predicates(
    placement: Placement, inventory: OcmInventory, candidates: np.ndarray
) -> PredicateFilterResult:
    """Upstream Predicate.Filter over inventory positions; order of `candidates` is kept."""
    success = ScheduleStatus(plugin=PLUGIN)
    # upstream returns before building anything, so selector and CEL errors go unreported without
    # candidates
    if not placement.predicates or len(candidates) == 0:
        return PredicateFilterResult(candidates, success, [])
    try:
        compiled = compile_predicates(placement.predicates)
    except PredicateMisconfigured as exc:
        return PredicateFilterResult(None, ScheduleStatus(MISCONFIGURED, PLUGIN, str(exc)), [])
    return PredicateFilterResult(
        candidates[predicate_mask(compiled, inventory, candidates)], success, compiled
    )


def _selector_keys(selector: LabelSelector) -> tuple[str, ...]:
    """The keys a selector reads, each once, in the order it names them."""
    return tuple(
        dict.fromkeys([k for k, _ in selector.match_labels] + [r.key for r in selector.match_expressions])
    )


def _mismatch(selector: LabelSelector, values: Mapping[str, str], what: str, noun: str) -> str | None:
    if selector.matches(values):
        return None
    keys = _selector_keys(selector)
    found = ", ".join(f"{k}={values[k]}" if k in values else f"no {noun} {k}" for k in keys)
    return f"{what} {selector.describe()} does not match ({found})"


def predicate_reason(predicates: Sequence[CompiledPredicate], inventory: OcmInventory, position: int) -> str:
    """A sentence naming, per predicate, the first part that rejected the cluster at `position`."""
    cluster = inventory.clusters[position]
    reasons = []
    for index, compiled in enumerate(predicates):
        predicate = compiled.predicate
        why = _mismatch(predicate.label_selector, cluster.labels, "labelSelector", "label")
        why = why or _mismatch(predicate.claim_label_selector, cluster.claim_map, "claimSelector", "claim")
        if why is None and not _cel_matches(compiled, inventory, position):
            expressions = " && ".join(predicate.cel_expressions)
            why = f"celSelector `{expressions}` is not true"
        reasons.append(f"predicate[{index}] {why}")
    return "does not match any predicate: " + "; ".join(reasons)


def _value_codes(inventory: OcmInventory, of_claims: bool, keys: tuple[str, ...]) -> np.ndarray:
    """Per cluster position a code naming its values (None when unset) of `keys` among its labels or,
    with `of_claims`, its claims; coded once per inventory for every placement reading the same keys."""

    def projection(held: OcmInventory, position: int) -> Hashable:
        cluster = held.clusters[position]
        values = cluster.claim_map if of_claims else cluster.labels
        return tuple(values.get(key) for key in keys)

    def built(held: OcmInventory) -> tuple[np.ndarray, dict[Hashable, int]]:
        return (held.claims if of_claims else held.labels).value_codes(keys)

    return inventory.projection_codes(("predicate reason", of_claims, keys), projection, built)


def predicate_reason_columns(
    predicates: Sequence[CompiledPredicate], inventory: OcmInventory, positions: np.ndarray
) -> list[np.ndarray]:
    """Columns over `positions` (clusters no predicate matched) such that clusters equal in every column
    get the same `predicate_reason`: per predicate, the reason reads only the cluster's values of the keys
    its selectors name and, where both selectors match, its CEL verdict (which the filter already holds)."""
    columns = []
    for compiled in predicates:
        predicate = compiled.predicate
        columns.append(_value_codes(inventory, False, _selector_keys(predicate.label_selector))[positions])
        columns.append(
            _value_codes(inventory, True, _selector_keys(predicate.claim_label_selector))[positions]
        )
        if compiled.cel is not None:
            reached = (
                inventory.labels.selector_mask(predicate.label_selector)[positions]
                & inventory.claims.selector_mask(predicate.claim_label_selector)[positions]
            )
            verdicts = np.zeros(len(positions), dtype=bool)
            verdicts[reached] = [_cel_matches(compiled, inventory, p) for p in positions[reached].tolist()]
            columns.append(verdicts)
    return columns
