"""A dashboard-owned Fleet CRP's ClusterResourceBindings, written to its hub and read back.

The dashboard schedules and rolls out dashboard-owned CRPs itself; their binding rows (owner=dashboard)
are the truth. They are written to the hub as ClusterResourceBinding objects of the same name, so the
hub's work generator and applier (or the demo hub's simulated apply) act on them and report Applied /
Available, which is read back into the rows. The objects carry the parent-CRP label and
`app.kubernetes.io/managed-by: fleet-placement-dashboard`; the sync skips objects with that label, so
they are never mirrored back as hub rows (they are already stored, as ours).

The dashboard writes spec and labels, and on status only the conditions its rollout executor owns
(RolloutStarted, as the upstream rollout controller does); every other condition is the hub's.
Nothing happens for hubs that do not serve Fleet, or for placements that are not dashboard-owned CRPs.

The writes of one call go to the hub in parallel (up to `WRITERS` at once), as upstream's rollout
controller and scheduler issue their binding updates: a round that moves ten bindings waits about one
hub round trip, not ten, which is most of a round's time on a busy hub.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import transaction

from inventory import bulk
from inventory.hubclient import HubClient, HubError
from inventory.hubwrites import Written, merge_conditions, update_with_retry
from inventory.objects import MANAGED_BY, MANAGED_BY_LABEL
from placement.models import CRP_LABEL, ClusterResourceBinding, Owner, Placement
from placement.scheduler.fleet.types import PREVIOUS_BINDING_STATE_ANNOTATION
from placement.scheduler.rollout.rolling import ROLLOUT_STARTED

logger = logging.getLogger(__name__)

API_VERSION = "placement.kubernetes-fleet.io/v1beta1"
KIND = "ClusterResourceBinding"
# Status conditions the dashboard writes (it plays the rollout controller); the hub reports the rest.
OWN_CONDITIONS = frozenset({ROLLOUT_STARTED})
NOT_FOUND = 404
# Hub writes of one call in flight at once (the kubernetes client's connection pool holds more).
WRITERS = 8

HubObjects = dict[str, dict[str, Any]]


def managed_labels(placement: Placement) -> dict[str, str]:
    return {CRP_LABEL: placement.name, MANAGED_BY_LABEL: MANAGED_BY}


def selector(placement: Placement) -> str:
    """The label selector of the placement's objects on the hub (kubectl syntax)."""
    return ",".join(f"{key}={value}" for key, value in managed_labels(placement).items())


def writes_to_hub(placement: Placement) -> bool:
    """Dashboard-owned CRPs of hubs that serve Fleet have their bindings on the hub."""
    owned = placement.owner == Owner.DASHBOARD
    return owned and placement.family.rolls_out_bindings and placement.hub.serves_fleet


def binding_object(placement: Placement, row: ClusterResourceBinding) -> dict[str, Any]:
    """The object the hub should hold for `row` (status is a subresource, written separately)."""
    metadata: dict[str, Any] = {"name": row.name, "labels": {**row.labels, **managed_labels(placement)}}
    if row.annotations:
        metadata["annotations"] = dict(row.annotations)
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": dict(row.spec)}


@dataclass
class PushReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # bindings whose writes met a 409 Conflict and were re-applied to the fresh object (once per conflict);
    # a conflict that outlasts every retry raises ConflictRetriesExhausted instead
    conflicts: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "deleted": len(self.deleted),
            "conflicts": len(self.conflicts),
        }

    def add(self, other: PushReport) -> None:
        self.created += other.created
        self.updated += other.updated
        self.deleted += other.deleted
        self.conflicts += other.conflicts


Row = TypeVar("Row")
Result = TypeVar("Result")


def _in_parallel(items: Sequence[Row], write: Callable[[Row], Result]) -> list[Result]:
    """`write(item)` for every item, up to WRITERS at once, answered in the items' order. A failure does
    not stop the other writes; the first one (in order) is raised once all have finished. `write` must
    not touch the database: it runs in threads of its own."""
    if len(items) <= 1:
        return [write(item) for item in items]
    pool = _writers(os.getpid())
    futures = [pool.submit(write, item) for item in items]
    wait(futures)
    return [future.result() for future in futures]


@functools.cache
def _writers(pid: int) -> ThreadPoolExecutor:
    """This process's writer threads, started once (a thread start costs about 2 ms on a busy worker):
    keyed by process id, so that a process forked from one that had them (a Celery worker's child) starts
    its own instead of submitting to threads it does not have."""
    return ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix=f"hub-write-{pid}")


def _push_rows(
    client: HubClient, placement: Placement, rows: Sequence[ClusterResourceBinding], current: HubObjects
) -> tuple[list[dict[str, Any]], PushReport]:
    """`_push_row` for every row, in parallel, then the rows whose status the hub's answer changed saved;
    answers the objects as the hub holds them after, in the rows' order, and what was done."""

    def push(row: ClusterResourceBinding) -> tuple[dict[str, Any], PushReport]:
        report = PushReport()
        return _push_row(client, placement, row, current.get(row.name), report), report

    pushed = _in_parallel(rows, push)
    total, changed = PushReport(), []
    for row, (obj, report) in zip(rows, pushed, strict=True):
        total.add(report)
        status = dict(obj.get("status") or {})
        if status != row.status:
            row.status = status
            changed.append(row)
    _save_statuses(changed)
    return [obj for obj, _ in pushed], total


def push_bindings(
    placement: Placement, rows: Iterable[ClusterResourceBinding], listed: HubObjects | None = None
) -> PushReport:
    """Create or update these rows' objects on the hub: spec, labels and the dashboard's own conditions
    (their observedGeneration set to the generation the spec write produced). Each row's `status`
    becomes the hub's answer and is saved. `listed` are the objects as just read from the hub (what
    `sync_bindings` answers), listed again when not given; a write over one that has changed since meets
    a 409 and is applied again to a fresh read. Raises HubError."""
    rows = list(rows)
    if not writes_to_hub(placement) or not rows:
        return PushReport()
    with HubClient(placement.hub) as client:
        current = _listed(client, placement) if listed is None else listed
        _, report = _push_rows(client, placement, rows, current)
    _log("pushed", placement, report)
    return report


def pull_binding_status(placement: Placement) -> HubObjects:
    """The placement's binding objects on the hub by name (metadata with generation, spec, status); each
    dashboard row's `status` becomes its object's and is saved. Empty when the hub has none of them or
    does not serve Fleet. Raises HubError.

    A row whose own conditions the hub's copy lacks while the copy's spec is the row's (so the desired
    state is ours and only our status write is missing, e.g. another writer replaced the conditions) has
    them written again first: the step reading them sees the rollout it started, not a binding that
    looks changed by someone else."""
    if not writes_to_hub(placement):
        return {}
    report, repushed = PushReport(), []
    with HubClient(placement.hub) as client:
        objects = _listed(client, placement)
        for row in placement.bindings.filter(owner=Owner.DASHBOARD, name__in=objects).order_by("name"):
            obj = objects[row.name]
            own = _own_conditions(row)
            if (
                own
                and obj.get("spec") == _without_nulls(row.spec)
                and _conditions_patch(own, obj) is not None
            ):
                objects[row.name] = _push_conditions(client, row, obj, report)
                repushed.append(row.name)
    _store_statuses(placement, objects)
    if repushed:
        logger.info(
            "bindings %s of %s had lost their own conditions on hub %s: written again (%d conflicts)",
            repushed,
            placement,
            placement.hub,
            len(report.conflicts),
        )
    return objects


def delete_bindings(placement: Placement, names: Iterable[str]) -> list[str]:
    """Delete these bindings: the dashboard rows, then the hub's objects (already gone counts as done);
    answers the names deleted on the hub. A hub failure raises HubError after the rows are gone; the
    next `sync_bindings` removes what is left on the hub."""
    names = sorted(set(names))
    ClusterResourceBinding.objects.filter(placement=placement, owner=Owner.DASHBOARD, name__in=names).delete()
    if not writes_to_hub(placement) or not names:
        return []
    with HubClient(placement.hub) as client:
        gone = _in_parallel(names, lambda name: _delete(client, name))
    deleted = [name for name, done in zip(names, gone, strict=True) if done]
    logger.info("deleted bindings %s of %s on hub %s", deleted, placement, placement.hub)
    return deleted


def sync_bindings(placement: Placement) -> tuple[HubObjects, PushReport]:
    """Make the hub hold exactly the placement's binding rows (create, update spec, delete leftovers)
    and read their status back into the rows; answers the objects as the hub now has them."""
    if not writes_to_hub(placement):
        return {}, PushReport()
    rows = list(placement.bindings.filter(owner=Owner.DASHBOARD).order_by("name"))
    with HubClient(placement.hub) as client:
        listed = _listed(client, placement)
        pushed, report = _push_rows(client, placement, rows, listed)
        leftovers = sorted(set(listed) - {row.name for row in rows})
        gone = _in_parallel(leftovers, lambda name: _delete(client, name))
    report.deleted += [name for name, done in zip(leftovers, gone, strict=True) if done]
    objects = {row.name: obj for row, obj in zip(rows, pushed, strict=True)}
    _log("synced", placement, report)
    return objects, report


# --- helpers ---------------------------------------------------------------------------------------


def _listed(client: HubClient, placement: Placement) -> HubObjects:
    return {
        obj["metadata"]["name"]: obj for obj in client.list_cluster_resource_bindings(selector(placement))
    }


def _push_row(
    client: HubClient,
    placement: Placement,
    row: ClusterResourceBinding,
    current: dict[str, Any] | None,
    report: PushReport,
) -> dict[str, Any]:
    """Write one row's object and own conditions; answers the object as the hub holds it after."""
    desired = binding_object(placement, row)
    if current is None:
        current = client.create_cluster_resource_binding(desired)
        report.created.append(row.name)
    else:
        spec = _write(client, row.name, lambda obj: _object_patch(obj, desired) or None, current, report)
        if spec.written:
            report.updated.append(row.name)
        current = spec.obj
    return _push_conditions(client, row, current, report)


def _write(
    client: HubClient,
    name: str,
    mutate: Callable[[dict[str, Any]], dict[str, Any] | None],
    current: dict[str, Any],
    report: PushReport,
    subresource: str | None = None,
) -> Written:
    written = update_with_retry(client, KIND, name, mutate, subresource=subresource, current=current)
    report.conflicts += [name] * written.conflicts
    return written


def _object_patch(current: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch taking `current` to `desired`'s labels, scheduler annotations and spec (removed keys
    set to null). Annotations others set on the object are left alone: the scheduler owns only its one."""
    patch: dict[str, Any] = {}
    metadata = current.get("metadata") or {}
    labels = metadata.get("labels") or {}
    if labels != desired["metadata"]["labels"]:
        patch["metadata"] = {"labels": _merge_patch(labels, desired["metadata"]["labels"])}
    previous = (desired["metadata"].get("annotations") or {}).get(PREVIOUS_BINDING_STATE_ANNOTATION)
    if (metadata.get("annotations") or {}).get(PREVIOUS_BINDING_STATE_ANNOTATION) != previous:
        patch.setdefault("metadata", {})["annotations"] = {PREVIOUS_BINDING_STATE_ANNOTATION: previous}
    spec = current.get("spec") or {}
    if spec != desired["spec"]:
        patch["spec"] = _merge_patch(spec, desired["spec"])
    return patch


def _merge_patch(current: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    return {**dict.fromkeys(set(current) - set(desired)), **desired}


def _without_nulls(value: Any) -> Any:
    """`value` as the hub stores it after a merge patch, which removes every key set to null."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _own_conditions(row: ClusterResourceBinding) -> list[dict[str, Any]]:
    return [c for c in (row.status or {}).get("conditions") or [] if c.get("type") in OWN_CONDITIONS]


def _conditions_patch(own: list[dict[str, Any]], obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status patch putting `own` into `obj`'s conditions at its current generation (the hub's other
    conditions kept), or None when the object has them already."""
    generation = (obj.get("metadata") or {}).get("generation")
    hub_conditions = list((obj.get("status") or {}).get("conditions") or [])
    merged = merge_conditions(hub_conditions, [{**c, "observedGeneration": generation} for c in own])
    if _by_type(merged) == _by_type(hub_conditions):
        return None
    return {"status": {"conditions": merged}}


def _push_conditions(
    client: HubClient, row: ClusterResourceBinding, current: dict[str, Any], report: PushReport
) -> dict[str, Any]:
    """Write the row's own conditions into the hub's status, for the object's current generation; a status
    the hub changed meanwhile is read again and ours merged into it (never overwritten, never dropped)."""
    own = _own_conditions(row)
    if not own:
        return current
    return _write(client, row.name, lambda obj: _conditions_patch(own, obj), current, report, "status").obj


def _by_type(conditions: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in conditions}


def _delete(client: HubClient, name: str) -> bool:
    try:
        client.delete_cluster_resource_binding(name)
    except HubError as exc:
        if exc.status == NOT_FOUND:
            return False
        raise
    return True


def _store_statuses(placement: Placement, objects: HubObjects) -> None:
    changed = []
    for row in placement.bindings.filter(owner=Owner.DASHBOARD, name__in=objects):
        status = dict(objects[row.name].get("status") or {})
        if status != row.status:
            row.status = status
            changed.append(row)
    _save_statuses(changed)


def _save_statuses(rows: list[ClusterResourceBinding]) -> None:
    """Write the rows' statuses (one statement for all; rows not stored yet are skipped)."""
    with transaction.atomic(savepoint=False):
        bulk.update_instances([row for row in rows if row.pk is not None], ["status"])


def _log(what: str, placement: Placement, report: PushReport) -> None:
    logger.info("%s bindings of %s to hub %s: %s", what, placement, placement.hub, report.counts())
