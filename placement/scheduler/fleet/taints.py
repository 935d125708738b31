"""Taints and tolerations: the TaintToleration filter of PickAll and PickN.

A cluster is rejected when any of its taints is tolerated by none of the placement's tolerations.
The effect is NoSchedule only: existing bindings under the same policy are never evicted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from placement.scheduler.fleet.types import TOLERATION_EQUAL, TOLERATION_EXISTS, Taint, Toleration
from placement.scheduler.taint_rows import TaintRows


def untolerated_rows(rows: TaintRows, tolerations: Sequence[Toleration]) -> np.ndarray:
    """Which taint rows no toleration tolerates (upstream `canTolerationTolerateTaint`, for every
    toleration and row at once): an empty effect matches every effect; Exists with an empty key
    matches every key; Equal needs the key and the value."""
    tolerated = np.zeros(len(rows), dtype=bool)
    for toleration in tolerations:
        matches = rows.with_effect(toleration.effect) if toleration.effect else np.ones(len(rows), dtype=bool)
        if toleration.operator == TOLERATION_EXISTS:
            if toleration.key:
                matches &= rows.with_key(toleration.key)
        elif toleration.operator == TOLERATION_EQUAL:
            matches &= rows.with_key(toleration.key) & rows.with_value(toleration.value)
        else:
            continue
        tolerated |= matches
    return ~tolerated


def first_untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """The first taint (in the cluster's order) that no toleration tolerates, or None."""
    rows = untolerated_rows(TaintRows.build([taints]), tolerations)
    return taints[int(np.argmax(rows))] if rows.any() else None


def untolerated_reason(taint: Taint) -> str:
    """The filter reason, as upstream prints it: `taint %+v cannot be tolerated` of a *Taint."""
    return f"taint &{{Key:{taint.key} Value:{taint.value} Effect:{taint.effect}}} cannot be tolerated"
