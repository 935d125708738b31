"""What-if: a partial spec override merged onto a stored placement, validated, evaluated, and explained.

Nothing here writes: the override is merged into a copy of the spec, checked by the scheduler's own
parsers (the same ManifestError the `schedule` command reports), run through `service.evaluate`,
and turned into a ranking, per-cluster explanations, the decision diff and the chart's figure.
"""

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone

from placement import service, tables
from placement.models import Placement
from placement.scheduler.errors import ManifestError, json_type
from placement.scheduler.fleet.report import FleetScheduleResult
from placement.scheduler.ocm.report import OcmScheduleResult

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


def _check_fields(override: Any, allowed: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(override, Mapping):
        raise ManifestError("", f"the override must be an object, not {json_type(override)}")
    for name in override:
        if name not in allowed:
            raise ManifestError(name, f"unknown field; an override may set {', '.join(allowed)}")
    return override


def merged_spec(placement: Placement, override: Any) -> dict[str, Any]:
    """The stored spec with `override` applied; raises ManifestError naming a malformed override field.

    The merged spec itself is validated by the scheduler's parser inside `service.evaluate`.
    """
    family = placement.family
    override = _check_fields(override, family.whatif_fields)
    return family.whatif_spec(copy.deepcopy(dict(placement.spec or {})), override)


# --- the response


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


def _chart_pick(ranked: Sequence[tables.ScoreRow], scored: int) -> tables.ChartPick[tables.ScoreRow]:
    """The chart's bars from the ranked rows the answer carries; the clusters left out are counted among
    every scored one, not only those ranked here."""
    pick = tables.chart_pick(ranked)
    return tables.ChartPick(pick.selected, pick.others, scored - len(pick.selected) - len(pick.others))


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
    family = placement.family
    rows, scored = family.whatif_rows(result, diff["added"] + diff["removed"], limit)
    ranked = [row for row in rows if row.rank is not None and row.rank <= limit]
    explanation = {"weights": family.whatif_weights(result)}
    prioritizers = [name for name, _ in family.prioritizer_columns(explanation)]
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
        "conditions": family.whatif_conditions(result),
        "diff": diff,
        "ranking": [_row_json(row) for row in ranked],
        "explanations": {row.name: _row_json(row) for row in rows},
        "chart": tables.chart_figure(
            family.chart_title, family.chart_axis, _chart_pick(ranked, scored), prioritizers
        ),
    }


def preview(
    placement: Placement, override: Any, *, limit: int = DEFAULT_LIMIT, now: datetime | None = None
) -> dict[str, Any]:
    """Run the scheduler on `override` merged onto the placement's spec; raises ManifestError. No writes."""
    spec = merged_spec(placement, override)
    result = service.evaluate(placement, spec=spec, now=now or timezone.now())
    return response(placement, spec, result, placement.family.current_selection(placement), limit)
