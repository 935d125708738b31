"""Tolerations of a placement: validated as upstream, previewed as a what-if, saved through the service.

OCM Placements keep them in `spec.tolerations` (key, operator, value, effect, tolerationSeconds); Fleet
ClusterResourcePlacements in `spec.policy.tolerations` (no tolerationSeconds; effect NoSchedule). The
scheduler's parsers judge them with upstream's messages; for OCM the two rules the scheduler applies
when it runs (an empty key needs operator Exists, and Exists takes no value; a toleration that breaks
either turns the placement Misconfigured and it selects nothing) are refused here before saving, with
the same messages. `preview` is the what-if decision diff (`placement.whatif`);
`save` goes through `placement.service.apply_spec` (dashboard-owned only, authorised, recorded in the
placement's history, rescheduled) and the audit log. Hub-owned placements are read-only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from inventory import audit
from inventory.models import AuditEntry
from placement import access, service, whatif
from placement.models import Placement
from placement.scheduler.errors import ManifestError

ACTION = "placement.tolerations"
TRIGGER = "tolerations edited"


def current(placement: Placement) -> list[dict[str, Any]]:
    """The stored tolerations, in spec order."""
    holder = placement.family.tolerations_holder(placement.spec or {})
    items = holder.get("tolerations") if isinstance(holder, Mapping) else None
    return [dict(item) for item in items or [] if isinstance(item, Mapping)]


def spec_with(placement: Placement, tolerations: list[dict[str, Any]]) -> dict[str, Any]:
    """A copy of the stored spec with `tolerations` in place (an empty list removes the field)."""
    spec = copy.deepcopy(dict(placement.spec or {}))
    holder = placement.family.editable_tolerations_holder(spec)
    if tolerations:
        holder["tolerations"] = [dict(t) for t in tolerations]
    else:
        holder.pop("tolerations", None)
    return spec


def errors(placement: Placement, tolerations: Any) -> dict[str, str]:
    """Why upstream would refuse (or, OCM, misconfigure on) these tolerations, by field path; {} if valid."""
    if not isinstance(tolerations, list):
        return {placement.family.tolerations_path: "Invalid value: must be an array of tolerations"}
    try:
        parsed = service.parse(placement, spec_with(placement, tolerations))
    except ManifestError as exc:
        return {exc.field: exc.message}
    return placement.family.toleration_errors(parsed)


def _validated(placement: Placement, tolerations: Any) -> list[dict[str, Any]]:
    if found := errors(placement, tolerations):
        raise ValidationError(found)
    valid: list[dict[str, Any]] = tolerations  # a list the parser accepted as tolerations
    return valid


def can_edit(user: access.User, placement: Placement) -> bool:
    """Dashboard-owned placements, for admins of the sets they can use (placement.access)."""
    return not placement.read_only and access.can_change(user, placement)


def preview(placement: Placement, tolerations: Any, *, now: datetime | None = None) -> dict[str, Any]:
    """The what-if answer (decision diff, ranking, conditions) with these tolerations; writes nothing.

    Raises ValidationError({path: reason}) for tolerations `save` would refuse.
    """
    tolerations = _validated(placement, tolerations)
    spec = spec_with(placement, tolerations)
    override = placement.family.tolerations_override(spec, tolerations)
    try:
        return whatif.preview(placement, override, now=now)
    except ManifestError as exc:  # a Fleet scheduling abort, reported on spec.policy
        raise ValidationError({exc.field: exc.message}) from None


def removed_with_reasons(answer: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The clusters a preview removes, each with the scheduler's sentence for why."""
    explanations = answer.get("explanations") or {}
    return [
        (name, (explanations.get(name) or {}).get("filteredBy") or "ranked below the selected clusters")
        for name in answer["diff"]["removed"]
    ]


def save(
    placement: Placement, tolerations: Any, *, actor: AbstractBaseUser, request: HttpRequest | None = None
) -> Placement:
    """Apply the tolerations (rescheduled, recorded in the placement's history) and audit the change.

    Raises PermissionDenied (audited; `access.ReadOnlyPlacement` for hub-owned placements) or
    ValidationError({path: reason}).
    """
    before = current(placement)
    access.authorise_change(actor, placement, ACTION, request=request, before=before)
    tolerations = _validated(placement, tolerations)
    # audited here, as the tolerations before and after, not as the whole spec
    spec = spec_with(placement, tolerations)
    service.apply_spec(placement, spec, actor=actor, trigger=TRIGGER, request=request, audit_as=None)
    after = current(placement)
    audit.record(
        actor,
        ACTION,
        placement,
        hub=placement.hub,
        before=before,
        after=after,
        outcome=AuditEntry.Outcome.OK if after != before else AuditEntry.Outcome.NO_OP,
        request=request,
    )
    return placement
