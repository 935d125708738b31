"""What-if: a partial spec override merged onto a stored placement, validated, evaluated, and explained.

Nothing here writes: the override is merged into a copy of the spec, checked by the scheduler's own
parsers (the same ManifestError the `schedule` command reports), run through `service.evaluate`,
and turned into a ranking, per-cluster explanations, the decision diff and the chart's figure.
"""

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from django.utils import timezone

from placement import queries, service, tables
from placement.models import Placement
from placement.scheduler.errors import ManifestError, json_type
from placement.scheduler.fleet.report import FleetScheduleResult
from placement.scheduler.ocm.report import OcmScheduleResult
from placement.scheduler.ocm.types import ADDITIVE, BUILT_IN_PRIORITIZERS, EXACT
from placement.summary import FLEET_CRP

OCM_FIELDS = ("numberOfClusters", "prioritizerPolicy", "tolerations")
FLEET_FIELDS = ("numberOfClusters", "preferred", "policy")
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
PREFERRED_PATH = ("affinity", "clusterAffinity", "preferredDuringSchedulingIgnoredDuringExecution")


def _check_fields(override: Any, allowed: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(override, Mapping):
        raise ManifestError("", f"the override must be an object, not {json_type(override)}")
    for name in override:
        if name not in allowed:
            raise ManifestError(name, f"unknown field; an override may set {', '.join(allowed)}")
    return override


def _ocm_spec(spec: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in override.items():
        # null clears a field: `"numberOfClusters": null` selects every feasible cluster
        if value is None:
            spec.pop(name, None)
        else:
            spec[name] = copy.deepcopy(value)
    return spec


def _preferred_terms(policy: dict[str, Any]) -> list[Any]:
    node: Any = policy
    for key in PREFERRED_PATH:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, list) else []


def _set_preferred_weight(terms: list[Any], entry: Any, index: int) -> None:
    where = f"preferred[{index}]"
    if not isinstance(entry, Mapping):
        raise ManifestError(where, f"must be an object, not {json_type(entry)}")
    unknown = set(entry) - {"index", "weight"}
    if unknown:
        raise ManifestError(f"{where}.{sorted(unknown)[0]}", "unknown field; an entry has index and weight")
    term = entry.get("index")
    if not isinstance(term, int) or isinstance(term, bool) or not 0 <= term < len(terms):
        raise ManifestError(
            f"{where}.index", f"Invalid value: {term!r}: the CRP has {len(terms)} preferred terms"
        )
    if not isinstance(terms[term], dict):
        raise ManifestError(f"{where}.index", f"preferred term {term} is not an object")
    terms[term]["weight"] = entry.get("weight")


def _fleet_spec(spec: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    if "policy" in override:
        spec["policy"] = copy.deepcopy(override["policy"])
    policy = spec.get("policy")
    if not isinstance(policy, dict):
        if "numberOfClusters" in override or "preferred" in override:
            raise ManifestError("policy", "the CRP has no policy to override; send a whole policy")
        return spec
    if "numberOfClusters" in override:
        policy["numberOfClusters"] = override["numberOfClusters"]
    preferred = override.get("preferred", [])
    if not isinstance(preferred, list):
        raise ManifestError("preferred", f"must be an array, not {json_type(preferred)}")
    terms = _preferred_terms(policy)
    for index, entry in enumerate(preferred):
        _set_preferred_weight(terms, entry, index)
    return spec


def merged_spec(placement: Placement, override: Any) -> dict[str, Any]:
    """The stored spec with `override` applied; raises ManifestError naming a malformed override field.

    The merged spec itself is validated by the scheduler's parser inside `service.evaluate`.
    """
    fleet = placement.kind == FLEET_CRP
    override = _check_fields(override, FLEET_FIELDS if fleet else OCM_FIELDS)
    spec = copy.deepcopy(dict(placement.spec or {}))
    return _fleet_spec(spec, override) if fleet else _ocm_spec(spec, override)


# --- the response


def _ocm_ranked(result: OcmScheduleResult, limit: int) -> tuple[list[str], int]:
    if result.outcome is None:
        return [], 0
    ranked = result.outcome.ranked
    return [result.names[p] for p in ranked[:limit]], len(ranked)


def _fleet_order(result: FleetScheduleResult) -> np.ndarray:
    """Scored, unfiltered member positions by (topology, affinity) descending, ties to the larger name."""
    table = result.cluster_table
    filtered = np.array([reason is not None for reason in table.filtered_by], dtype=bool)
    positions = np.flatnonzero(table.scored & ~filtered)
    # positions are name order, so a reversed stable lexsort breaks ties by descending name
    order = np.lexsort((positions, table.affinity[positions], table.topology[positions]))[::-1]
    return positions[order]


def _rows(
    result: OcmScheduleResult | FleetScheduleResult, names: Sequence[str], limit: int
) -> tuple[list[tables.ScoreRow], int]:
    """ScoreRows for the top `limit` ranked clusters plus `names`, and the number of scored clusters."""
    if isinstance(result, FleetScheduleResult):
        order = _fleet_order(result)
        table = result.cluster_table
        ranks = {table.names[p]: rank for rank, p in enumerate(order, 1)}
        extra = [name for name in names if name not in ranks or ranks[name] > limit]
        wanted = [table.names[p] for p in order[:limit]] + extra
        rows = [
            tables.fleet_row(explanation.to_dict(), ranks.get(name))
            for name in wanted
            if (explanation := result.explain(name)) is not None
        ]
        return rows, len(order)
    ranked, scored = _ocm_ranked(result, limit)
    shown = set(ranked)
    wanted = ranked + [n for n in names if n not in shown and n in result.inventory.position]
    return [tables.ocm_row(result.explain(name), result.weights) for name in wanted], scored


def _conditions(result: OcmScheduleResult | FleetScheduleResult) -> list[dict[str, Any]]:
    if isinstance(result, FleetScheduleResult):
        return [result.condition.to_dict()]
    return list(result.conditions)


def _row_json(row: tables.ScoreRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "rank": row.rank,
        "selected": row.selected,
        "filteredBy": row.filtered_by,
        "scores": row.scores,
        "contributions": row.contributions,
        "total": row.total,
    }


def response(
    placement: Placement,
    spec: Mapping[str, Any],
    result: OcmScheduleResult | FleetScheduleResult,
    current: Sequence[str],
    limit: int = DEFAULT_LIMIT,
) -> dict[str, Any]:
    """The what-if answer: ranking, explanations of the ranked and the changed clusters, diff, chart."""
    selected = list(result.selected)
    diff = service.decision_diff(current, selected)
    rows, scored = _rows(result, diff["added"] + diff["removed"], limit)
    ranked = [row for row in rows if row.rank is not None and row.rank <= limit]
    explanation = {"weights": {} if isinstance(result, FleetScheduleResult) else result.weights}
    prioritizers = [name for name, _ in tables.prioritizer_columns(placement.kind, explanation)]
    return {
        "placement": {
            "id": placement.pk,
            "kind": placement.kind,
            "namespace": placement.namespace,
            "name": placement.name,
        },
        "spec": spec,
        "selected": selected,
        "numberOfSelectedClusters": len(selected),
        "scoredClusters": scored,
        "weights": explanation["weights"],
        "conditions": _conditions(result),
        "diff": diff,
        "ranking": [_row_json(row) for row in ranked],
        "explanations": {row.name: _row_json(row) for row in rows},
        "chart": tables.chart_figure(placement.kind, ranked, prioritizers),
    }


def preview(
    placement: Placement, override: Any, *, limit: int = DEFAULT_LIMIT, now: datetime | None = None
) -> dict[str, Any]:
    """Run the scheduler on `override` merged onto the placement's spec; raises ManifestError. No writes."""
    spec = merged_spec(placement, override)
    result = service.evaluate(placement, spec=spec, now=now or timezone.now())
    return response(placement, spec, result, queries.current_selection(placement), limit)


# --- the controls the placement page starts from


def _coordinate_label(config: Mapping[str, Any]) -> str:
    coordinate = config.get("scoreCoordinate") or {}
    add_on = coordinate.get("addOn") or {}
    if coordinate.get("type") == "AddOn":
        return f"AddOn/{add_on.get('resourceName', '')}/{add_on.get('scoreName', '')}"
    return coordinate.get("builtIn") or config.get("name") or "(no scoreCoordinate)"


def _toleration_label(toleration: Mapping[str, Any]) -> str:
    operator = toleration.get("operator") or "Equal"
    text = toleration.get("key") or "(any key)"
    if operator == "Equal":
        text += f"={toleration.get('value', '')}"
    else:
        text += f" {operator}"
    if toleration.get("effect"):
        text += f":{toleration['effect']}"
    if toleration.get("tolerationSeconds") is not None:
        text += f" for {toleration['tolerationSeconds']}s"
    return text


def controls(placement: Placement) -> dict[str, Any]:
    """What the what-if form edits, read from the stored spec: weights, mode, count, tolerations, terms."""
    spec = placement.spec or {}
    if placement.kind == FLEET_CRP:
        policy = spec.get("policy")
        if not isinstance(policy, dict):
            policy = {}
        terms = _preferred_terms(policy)
        return {
            "kind": placement.kind,
            "placementType": policy.get("placementType") or "PickAll",
            "numberOfClusters": policy.get("numberOfClusters"),
            "preferred": [
                {"index": index, "weight": term.get("weight", 0), "label": _term_label(term)}
                for index, term in enumerate(terms)
                if isinstance(term, Mapping)
            ],
        }
    policy = spec.get("prioritizerPolicy") or {}
    configurations = [c for c in policy.get("configurations") or [] if isinstance(c, Mapping)]
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    return {
        "kind": placement.kind,
        "mode": policy.get("mode") or ADDITIVE,
        "modes": [ADDITIVE, EXACT],
        "numberOfClusters": spec.get("numberOfClusters"),
        "configurations": [
            {"index": i, "label": _coordinate_label(c), "weight": c.get("weight", 1), "config": c}
            for i, c in enumerate(configurations)
        ],
        "tolerations": [
            {"index": i, "label": _toleration_label(t), "toleration": t} for i, t in enumerate(tolerations)
        ],
        "builtIns": list(BUILT_IN_PRIORITIZERS),
    }


def _term_label(term: Mapping[str, Any]) -> str:
    selector = (term.get("preference") or {}).get("labelSelector") or {}
    parts = [f"{key}={value}" for key, value in (selector.get("matchLabels") or {}).items()]
    parts += [
        f"{e.get('key')} {e.get('operator')} ({','.join(e.get('values') or [])})"
        for e in selector.get("matchExpressions") or []
    ]
    sorter = (term.get("preference") or {}).get("propertySorter")
    if sorter:
        parts.append(f"sort by {sorter.get('name')} {sorter.get('sortOrder', '')}".strip())
    return ", ".join(parts) or "(every cluster)"
