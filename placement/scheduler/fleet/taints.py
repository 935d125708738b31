"""Taints and tolerations: the TaintToleration filter of PickAll and PickN.

A cluster is rejected when any of its taints is tolerated by none of the placement's tolerations.
The effect is NoSchedule only: existing bindings under the same policy are never evicted.
"""

from __future__ import annotations

from collections.abc import Sequence

from placement.scheduler.fleet.types import TOLERATION_EQUAL, TOLERATION_EXISTS, Taint, Toleration


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Whether one toleration tolerates one taint (upstream `canTolerationTolerateTaint`)."""
    effect_matches = toleration.effect in ("", taint.effect)
    if toleration.operator == TOLERATION_EXISTS:
        return toleration.key in ("", taint.key) and effect_matches
    if toleration.operator == TOLERATION_EQUAL:
        return toleration.key == taint.key and toleration.value == taint.value and effect_matches
    return False


def first_untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """The first taint (in the cluster's order) that no toleration tolerates, or None."""
    for taint in taints:
        if not any(tolerates(toleration, taint) for toleration in tolerations):
            return taint
    return None


def untolerated_reason(taint: Taint) -> str:
    """The filter reason, as upstream prints it: `taint %+v cannot be tolerated` of a *Taint."""
    return f"taint &{{Key:{taint.key} Value:{taint.value} Effect:{taint.effect}}} cannot be tolerated"
