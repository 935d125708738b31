"""The placement service: evaluate placements on a hub's current inventory, store what they decide.

- `hub_snapshot(hub)`: the scheduler inventories of one hub, built once from the rows and cached per
  process; when the hub's data changes (`invalidate_snapshot`, called by the change recorder, journals
  what changed) each process patches its snapshot with only the changed rows (`placement.journal`).
- `evaluate`: pure; what the scheduler decides now, optionally for another spec (what-if).
- `reschedule`: evaluate and store as upstream stores it: dashboard-owned placements get
  PlacementDecisions / ClusterResourceBindings, conditions, events and history; hub-owned ones (the
  hub's controller decides) get only the explanation and a history entry when the hub's decisions moved.
- `apply_spec` / `create_placement`: validated, authorised, audited changes of dashboard-owned placements.
"""

from __future__ import annotations

import bisect
import copy
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, models, transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.utils import timezone

from inventory import audit, scheduler_inputs
from inventory.changes import scheduler_view
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from placement import access, explanations, history, hubdecisions, journal, runwrites
from placement.models import (
    ClusterResourceBinding,
    DecisionChange,
    HubInventoryVersion,
    Owner,
    Placement,
    PlacementDecision,
)
from placement.runwrites import RunWrites
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet import types as fleet
from placement.scheduler.fleet.eligibility import HEARTBEAT_TIMEOUT
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.manifests import (
    parse_agent_statuses,
    parse_cluster_resource_binding,
)
from placement.scheduler.fleet.report import FleetScheduleResult
from placement.scheduler.ocm import types as ocm
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.report import OcmScheduleResult

logger = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=models.Model)
Kind = journal.Kind

ScheduleResult = OcmScheduleResult | FleetScheduleResult
Parsed = ocm.Placement | fleet.ClusterResourcePlacement
# HubSnapshot's `fleet` field hides the module inside the class
FleetBinding = fleet.ClusterResourceBinding
Actor = AbstractBaseUser | str | None
# A placement's dashboard-owned decision rows (or bindings), and what a scheduler run reads of them.
StoredRows = tuple[list[Any], tuple[Any, ...]]
Explained = explanations.Explained

FLEET_API_VERSION = "placement.kubernetes-fleet.io/v1beta1"
SPEC_ACTION, CREATE_ACTION, DELETE_ACTION = "placement.spec", "placement.create", "placement.delete"


def ignore_notes(message: str) -> None:
    """Parser notes on legacy forms: the stored spec was accepted once already."""


# --- the per-hub inventory snapshot ------------------------------------------------------------------


@dataclass
class HubSnapshot:
    """A hub's scheduling inputs as the scheduler reads them, shared by every placement of the hub."""

    key: tuple[Any, ...]
    ocm: OcmInventory
    fleet: FleetInventory
    # Fleet ClusterResourceBindings by CRP name
    bindings: dict[str, list[FleetBinding]] = field(default_factory=dict)
    # AddOnPlacementScore resource name -> sorted validUntil moments (timed runs at expiry)
    score_expiries: dict[str, list[datetime]] = field(default_factory=dict)
    # When the first heartbeat this snapshot holds goes stale (None: none will). Heartbeats of live Fleet
    # members are not changes (inventory.relevance), so the stored ones move on while the snapshot keeps
    # the ones it was built with; past this moment it could call a member stale that is not, and reads its
    # members' heartbeats again.
    fresh_until: datetime | None = None
    # validUntil of every AddOnPlacementScore that has one, by (namespace, name): what a patch takes out
    # of `score_expiries` when the score changes
    score_moments: dict[tuple[str, str], datetime] = field(default_factory=dict)

    @property
    def version(self) -> int:
        """The hub's inventory version this snapshot holds."""
        version: int = self.key[2]
        return version

    def fresh_at(self, now: datetime) -> bool:
        return self.fresh_until is None or now < self.fresh_until

    def next_score_expiry(self, resource_names: Iterable[str], now: datetime) -> datetime | None:
        """The first validUntil after `now` among the scores of these add-on resources."""
        moments = []
        for resource in resource_names:
            expiries = self.score_expiries.get(resource, [])
            index = bisect.bisect_right(expiries, now)
            if index < len(expiries):
                moments.append(expiries[index])
        return min(moments, default=None)


_snapshots: dict[int, HubSnapshot] = {}
_snapshots_lock = threading.Lock()
# the hub decisions each chunk of a full reschedule reads again (`current_snapshot`)
_decisions = hubdecisions.Reread()


def invalidate_snapshot(hub_id: int, touched: Iterable[journal.Identity] | None = None) -> None:
    """The hub's inputs `touched` changed (None: any of them), in the caller's transaction: every process
    patches its snapshot with those on next use (or builds it again when they are not named)."""
    journal.record(hub_id, touched)


def forget_snapshots() -> None:
    """Drop this process's cached snapshots (tests that write rows directly, bypassing the change hook)."""
    with _snapshots_lock:
        _snapshots.clear()


def _snapshot_key(hub: Hub) -> tuple[Any, ...]:
    # Every scheduler run reads this one row by its primary key: written as SQL, since building the
    # ORM's query cost several times running it (a tenth of a steady run's CPU at 10,000 clusters).
    ops = connection.ops
    table, version, key = map(ops.quote_name, (HubInventoryVersion._meta.db_table, "version", "hub_id"))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {version} FROM {table} WHERE {key} = %s", [hub.pk])
        row = cursor.fetchone()
    # created tells a reused primary key apart
    return (hub.pk, hub.created, row[0] if row else 0)


# A catch-up reloading more inputs than this share of the snapshot's objects builds it again instead.
CATCH_UP_SHARE = 0.1
# ... but a small hub catches up on this many inputs whatever its size.
CATCH_UP_MINIMUM = 100


def hub_snapshot(hub: Hub, now: datetime | None = None, *, heartbeats: bool = True) -> HubSnapshot:
    """The hub's OCM and Fleet inventories and Fleet bindings: built once, then patched with the rows
    each later version changed (`journal.since`) and, once a heartbeat it holds goes stale (for a
    scheduler run at `now`), with its members' stored heartbeats; built again when the journal cannot
    say what changed. A caller that schedules no Fleet placement passes `heartbeats=False`: reading
    every member's heartbeats again costs seconds at 50,000 members, and OCM scheduling reads none."""
    key = _snapshot_key(hub)
    now = _now(now)
    with _snapshots_lock:
        cached = _snapshots.get(hub.pk)
        if cached is not None and cached.key == key and (not heartbeats or cached.fresh_at(now)):
            return cached
    snapshot = None
    if cached is not None and cached.key[:2] == key[:2] and cached.version <= key[2]:
        if heartbeats and not cached.fresh_at(now):
            cached = _heartbeats_read_again(hub, cached, now)
        snapshot = cached if cached.key == key else _caught_up(hub, cached, key, now)
    if snapshot is None:
        snapshot = _build_snapshot(hub, key, now)
    with _snapshots_lock:
        _snapshots[hub.pk] = snapshot
    return snapshot


def reads_heartbeats(placements: Iterable[Placement]) -> bool:
    """Whether scheduling any of these placements reads its members' heartbeats (`hub_snapshot`)."""
    return any(placement.family.reads_heartbeats for placement in placements)


def current_snapshot(hub: Hub, *, heartbeats: bool = True) -> HubSnapshot:
    """`hub_snapshot` with every placement's PlacementDecisions read again: workers rescheduling other
    placements of the hub store decisions without changing the hub's version, and Balance counts them
    all. Used once per chunk of a full reschedule: after the first whole read, one query of the rows'
    keys and digests, and one more for the rows that moved (`hubdecisions.Reread`)."""
    snapshot = hub_snapshot(hub, heartbeats=heartbeats)
    refreshed = _decisions.refresh(hub, snapshot.ocm)
    if refreshed:
        logger.debug("hub %s: decisions of %d placements changed elsewhere", hub.name, refreshed)
    return snapshot


def _converted(rows: Iterable[Any], convert: Any) -> list[Any]:
    items = []
    for row in rows:
        try:
            items.append(convert(row))
        except (ManifestError, ValueError) as exc:
            logger.warning("%s %s cannot be read by the scheduler: %s", type(row).__name__, row, exc)
    return items


def _fresh_until(members: Iterable[fleet.MemberCluster], now: datetime) -> datetime | None:
    """The first moment one of these members' fresh heartbeats becomes stale."""
    expiries = (
        agent.last_received_heartbeat + HEARTBEAT_TIMEOUT
        for member in members
        for agent in member.agent_status
        if agent.last_received_heartbeat is not None
    )
    return min((moment for moment in expiries if moment > now), default=None)


def _heartbeats_read_again(hub: Hub, cached: HubSnapshot, now: datetime) -> HubSnapshot:
    """`cached` with its members' agent statuses as stored now. A live member's heartbeats are not
    journaled (noise), so past `fresh_until` the snapshot would call members stale that report on time;
    reading the one column again and patching the members whose agents moved costs a fraction of a new
    build. A member added or removed meanwhile is the journal's (the catch-up that follows)."""
    rows = ManagedCluster.objects.filter(hub=hub, kind=ManagedCluster.Kind.MEMBER_CLUSTER)
    moved: dict[str, fleet.MemberCluster | None] = {}
    for name, raw in rows.values_list("name", "agent_status").iterator(chunk_size=2_000):
        member = cached.fleet.get(name)
        if member is None:
            continue
        try:
            agents = parse_agent_statuses(raw)
        except (ManifestError, ValueError):
            # stored by a sync that refused it? the row stays as the snapshot last read it
            continue
        if agents != member.agent_status:
            moved[name] = replace(member, agent_status=agents)
    members = cached.fleet.patched(moved)
    logger.debug("hub %s: heartbeats of %d members read again", hub.name, len(moved))
    return replace(cached, fleet=members, fresh_until=_fresh_until(members.clusters, now))


def _build_snapshot(hub: Hub, key: tuple[Any, ...], now: datetime) -> HubSnapshot:
    clusters = ManagedCluster.objects.filter(hub=hub)
    scores = list(AddOnPlacementScore.objects.filter(hub=hub))
    inventory = OcmInventory(
        _converted(
            clusters.filter(kind=ManagedCluster.Kind.MANAGED_CLUSTER).only(
                *scheduler_inputs.MANAGED_CLUSTER_FIELDS
            ),
            scheduler_inputs.managed_cluster,
        ),
        _converted(ManagedClusterSet.objects.filter(hub=hub), scheduler_inputs.cluster_set),
        [
            scheduler_inputs.cluster_set_binding(row)
            for row in ManagedClusterSetBinding.objects.filter(hub=hub)
        ],
        _converted(scores, scheduler_inputs.add_on_score),
        hubdecisions.all_of(hub),
    )
    bindings: dict[str, list[fleet.ClusterResourceBinding]] = {}
    for binding in _converted(ClusterResourceBinding.objects.filter(hub=hub), _binding):
        bindings.setdefault(binding.placement_name, []).append(binding)
    expiries: dict[str, list[datetime]] = {}
    moments = {}
    for score in scores:
        if score.valid_until is not None:
            expiries.setdefault(score.name, []).append(score.valid_until)
            moments[(score.namespace, score.name)] = score.valid_until
    members = _converted(
        clusters.filter(kind=ManagedCluster.Kind.MEMBER_CLUSTER).only(
            *scheduler_inputs.MEMBER_CLUSTER_FIELDS
        ),
        scheduler_inputs.member_cluster,
    )
    return HubSnapshot(
        key,
        inventory,
        FleetInventory(members),
        bindings,
        {name: sorted(moments) for name, moments in expiries.items()},
        _fresh_until(members, now),
        moments,
    )


def _caught_up(hub: Hub, cached: HubSnapshot, key: tuple[Any, ...], now: datetime) -> HubSnapshot | None:
    """`cached` patched with the rows the versions after it changed, or None when the journal cannot
    say (pruned, or too much changed: building again is then as cheap and simpler)."""
    size = cached.ocm.size + len(cached.fleet)
    limit = max(CATCH_UP_MINIMUM, int(size * CATCH_UP_SHARE))
    delta = journal.since(hub.pk, cached.version, key[2], limit)
    if delta is None:
        return None
    rows = ManagedCluster.objects.filter(hub=hub)
    clusters = _converted_by_identity(
        _by_identity(rows.filter(kind=ManagedCluster.Kind.MANAGED_CLUSTER), delta[Kind.CLUSTER]),
        delta[Kind.CLUSTER],
        scheduler_inputs.managed_cluster,
    )
    members = _converted_by_identity(
        _by_identity(rows.filter(kind=ManagedCluster.Kind.MEMBER_CLUSTER), delta[Kind.MEMBER_CLUSTER]),
        delta[Kind.MEMBER_CLUSTER],
        scheduler_inputs.member_cluster,
    )
    sets = _reloaded(ManagedClusterSet, hub, delta[Kind.CLUSTER_SET], scheduler_inputs.cluster_set)
    score_rows = _by_identity(AddOnPlacementScore.objects.filter(hub=hub), delta[Kind.SCORE])
    inventory = cached.ocm.patched(
        {name: cluster for (_, name), cluster in clusters.items()},
        {name: cluster_set for (_, name), cluster_set in sets.items()},
        _reloaded(ManagedClusterSetBinding, hub, delta[Kind.BINDING], scheduler_inputs.cluster_set_binding),
        _converted_by_identity(score_rows, delta[Kind.SCORE], scheduler_inputs.add_on_score),
        _reloaded_decisions(hub, delta[Kind.DECISION]),
    )
    if delta[Kind.DECISIONS]:
        inventory.refresh_decisions(hubdecisions.all_of(hub))
    expiries, moments = _patched_expiries(cached, score_rows, delta[Kind.SCORE])
    fresh = (_fresh_until([m for m in members.values() if m is not None], now), cached.fresh_until)
    return HubSnapshot(
        key,
        inventory,
        cached.fleet.patched({name: member for (_, name), member in members.items()}),
        _patched_bindings(hub, cached.bindings, {name for _, name in delta[Kind.RESOURCE_BINDING]}),
        expiries,
        min((moment for moment in fresh if moment is not None), default=None),
        moments,
    )


Identities = set[tuple[str, str]]


def _by_identity(rows: QuerySet[M], identities: Identities) -> list[M]:
    """The rows named by these (namespace, name) identities (namespace "" for cluster-scoped kinds)."""
    if not identities:
        return []
    names = {name for _, name in identities}
    namespaces = {namespace for namespace, _ in identities}
    found = rows.filter(name__in=names)
    if namespaces != {""}:
        found = found.filter(namespace__in=namespaces)
    return [row for row in found if _identity(row) in identities]


def _identity(row: Any) -> tuple[str, str]:
    """(namespace, name) of a row; namespace "" for a cluster-scoped kind."""
    return getattr(row, "namespace", ""), row.name


def _converted_by_identity(
    rows: Iterable[Any], identities: Identities, convert: Callable[[Any], T]
) -> dict[tuple[str, str], T | None]:
    """Each identity's converted row; None for one without a row or whose row the scheduler cannot read."""
    found: dict[tuple[str, str], T | None] = dict.fromkeys(identities)
    for row in rows:
        found[_identity(row)] = scheduler_view(row, convert)
    return found


def _reloaded(
    model: type[models.Model], hub: Hub, identities: Identities, convert: Callable[[Any], T]
) -> dict[tuple[str, str], T | None]:
    rows = _by_identity(model._default_manager.filter(hub=hub), identities)
    return _converted_by_identity(rows, identities, convert)


def _reloaded_decisions(
    hub: Hub, identities: Identities
) -> dict[tuple[str, str], ocm.PlacementDecision | None]:
    """These PlacementDecisions as `hubdecisions.all_of` reads them (None: gone, or a published copy)."""
    found: dict[tuple[str, str], ocm.PlacementDecision | None] = dict.fromkeys(identities)
    if not identities:
        return found
    published = hubdecisions.published(hub)
    rows = PlacementDecision.objects.filter(hub=hub, name__in={name for _, name in identities})
    for row in rows.values_list(*hubdecisions.FIELDS):
        _, namespace, name, *_ = row
        if (namespace, name) in identities:
            found[(namespace, name)] = hubdecisions.counted(hub, published, row)
    return found


def _patched_bindings(
    hub: Hub, bindings: Mapping[str, list[FleetBinding]], names: set[str]
) -> dict[str, list[FleetBinding]]:
    """The Fleet bindings by CRP with the ClusterResourceBindings called `names` read again; a copy."""
    patched = dict(bindings)
    if not names:
        return patched
    for crp, own in bindings.items():
        if any(binding.name in names for binding in own):
            patched[crp] = [binding for binding in own if binding.name not in names]
    rows = ClusterResourceBinding.objects.filter(hub=hub, name__in=names)
    for binding in _converted(rows, _binding):
        patched[binding.placement_name] = [*patched.get(binding.placement_name, []), binding]
    return patched


def _patched_expiries(
    cached: HubSnapshot, rows: Iterable[AddOnPlacementScore], identities: Identities
) -> tuple[dict[str, list[datetime]], dict[tuple[str, str], datetime]]:
    """`score_expiries` and `score_moments` with the scores named by `identities` (their `rows`) taken out
    and put back; lists are copied before they change."""
    expiries, moments = dict(cached.score_expiries), dict(cached.score_moments)
    copied: set[str] = set()

    def own(name: str) -> list[datetime]:
        """The expiry list of add-on resource `name`, copied once before it changes."""
        if name not in copied:
            expiries[name] = list(expiries.get(name, []))
            copied.add(name)
        return expiries[name]

    for identity in identities:
        if (moment := moments.pop(identity, None)) is not None:
            own(identity[1]).remove(moment)
    for row in rows:
        if row.valid_until is not None:
            bisect.insort(own(row.name), row.valid_until)
            moments[_identity(row)] = row.valid_until
    return {name: listed for name, listed in expiries.items() if listed}, moments


def _binding(row: ClusterResourceBinding) -> fleet.ClusterResourceBinding:
    return parse_cluster_resource_binding(
        {
            "apiVersion": FLEET_API_VERSION,
            "kind": "ClusterResourceBinding",
            "metadata": {"name": row.name, "labels": row.labels, "annotations": row.annotations},
            "spec": row.spec,
            "status": row.status,
        }
    )


# --- evaluation ------------------------------------------------------------------------------------


def manifest(placement: Placement, spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The placement as a Kubernetes object (its spec, or `spec` instead)."""
    metadata: dict[str, Any] = {"name": placement.name, "labels": placement.labels}
    if placement.annotations:
        metadata["annotations"] = placement.annotations
    family = placement.family
    if family.namespaced:
        metadata["namespace"] = placement.namespace
    return {
        "apiVersion": family.api_version,
        "kind": placement.kind,
        "metadata": metadata,
        "spec": dict(placement.spec if spec is None else spec),
    }


def parse(placement: Placement, spec: Mapping[str, Any] | None = None) -> Parsed:
    """The scheduler's view of the placement; raises ManifestError(field, message) as admission would."""
    parsed: Parsed = placement.family.parse(manifest(placement, spec))
    return parsed


def admit(placement: Placement, spec: Mapping[str, Any] | None = None) -> Parsed:
    """`parse`, and what the dashboard refuses in the objects it writes although a hub admits them: a
    label selector apimachinery cannot convert (upstream schedulers only meet it when they run).
    Raises ManifestError(field, message)."""
    parsed = parse(placement, spec)
    if problems := parsed.selector_problems:
        raise ManifestError(problems[0].field, problems[0].message)
    return parsed


def _now(now: datetime | None) -> datetime:
    return timezone.now() if now is None else now


def _conditions(placement: Placement) -> list[dict[str, Any]]:
    return _conditions_of(placement.status)


def _conditions_of(status: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The conditions of a stored status, copied."""
    conditions = (status or {}).get("conditions")
    return [dict(c) for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []


def evaluate(
    placement: Placement,
    *,
    spec: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    snapshot: HubSnapshot | None = None,
) -> ScheduleResult:
    """What the scheduler decides for `placement` (or for it with `spec`) on its hub now. Writes nothing.

    `snapshot` stands in for the hub's inventory (a preview of an inventory edit, such as a taint).
    Raises ManifestError(field, message) for a spec the webhook or CRD would reject (a Fleet
    scheduling abort, such as a malformed property name, is reported on `spec.policy`).
    """
    parsed = parse(placement, spec)
    snapshot = snapshot or hub_snapshot(placement.hub, _now(now), heartbeats=reads_heartbeats([placement]))
    return placement.family.schedule(placement, parsed, snapshot, _now(now), spec=spec)


def decision_diff(before: Sequence[str], after: Sequence[str]) -> dict[str, list[str]]:
    """Clusters kept, added and removed between two selections, each sorted by name."""
    old, new = set(before), set(after)
    return {"kept": sorted(old & new), "added": sorted(new - old), "removed": sorted(old - new)}


# --- rescheduling ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one reschedule stored: the selection before/after and when the next timed run is due."""

    before: list[str]
    after: list[str]
    changed_decisions: bool
    due: datetime | None = None
    due_trigger: str = ""


def reschedule(
    placement: Placement,
    *,
    trigger: str,
    now: datetime | None = None,
    actor: Actor = None,
    edit: DecisionChange | None = None,
    seen: _Stored | None = None,
) -> DecisionChange | None:
    """Evaluate the placement on its hub and store the result; answers the history entry when the
    selected set changed (written into `edit`, the entry of the spec edit that led to it, if given).
    Timed runs and publishing follow through `placement.tasks`.

    The scheduler runs outside any transaction, on the stored state read without a lock; the write
    transaction then stores the result only if that state is still what the scheduler saw (compare and
    set) and otherwise schedules again. On SQLite a transaction holds the one writer lock of the whole
    database, so a scheduler run inside it (seconds under load) made every other writer wait on it.
    A run that would store what is stored (same decisions, status, explanation and record, no events)
    writes only `last_scheduled_at`, without a transaction: it overwrites nothing another writer stored.

    `seen`: the stored state as the caller read it just now (`read_stored`), the first attempt's read.
    """
    from placement import tasks  # tasks call this module

    now = _now(now)
    snapshot = hub_snapshot(placement.hub, now, heartbeats=reads_heartbeats([placement]))
    for attempt in range(_OPTIMISTIC_ATTEMPTS + 1):
        locked = attempt == _OPTIMISTIC_ATTEMPTS
        planned = None
        if not locked:
            if seen is None or attempt:
                seen = _Stored.read_one(placement, lock=False)
            planned = _plan(placement, seen, snapshot, now)
            if planned.unchanged is not None:
                _store_time([placement], now)
                outcome, change = planned.unchanged, None
                break
        with transaction.atomic():
            current = _Stored.read_one(placement, lock=True)
            if planned is None or current != seen:
                if not locked:
                    continue
                # others keep changing it: the last attempt schedules under the lock, as it must finish
                planned = _plan(placement, current, snapshot, now)
            run = RunWrites(placement)
            outcome = planned.write(run)
            change = _finish(run, planned, outcome, current, trigger, now, actor, edit)
            runwrites.store([run])
        break
    tasks.follow_up(placement, outcome, now)
    return change


def reschedule_together(
    hub: Hub,
    placements: Sequence[Placement],
    *,
    trigger: str,
    seen: Mapping[int, _Stored],
    now: datetime | None = None,
) -> list[Placement]:
    """A full reschedule's chunk: each placement evaluated on the hub's snapshot as `reschedule` does, on
    its state as read in `seen`, one after the other (a run's decisions are in the snapshot the next one
    reads, as Balance counts them), then every run that writes stored in one transaction: the rows
    locked by one query (their decisions or bindings by one per family), each run kept only if its
    state is still the one it read (compare and set), the rows of all of them written in bulk
    (`placement.runwrites`). Answers the placements left to `reschedule` one by one: those whose run
    failed (it fails again there, where its failure is counted), whose state changed before the lock,
    or all the written ones if their write failed."""
    from placement import tasks  # tasks call this module

    now = _now(now)
    snapshot = hub_snapshot(hub, now, heartbeats=reads_heartbeats(placements))
    left: list[Placement] = []
    unchanged: list[tuple[Placement, Outcome]] = []
    written: list[tuple[RunWrites, Planned, Outcome]] = []
    for placement in placements:
        try:
            planned = _plan(placement, seen[placement.pk], snapshot, now)
            if planned.unchanged is not None:
                unchanged.append((placement, planned.unchanged))
                continue
            run = RunWrites(placement)
            written.append((run, planned, planned.write(run)))
        except Exception:
            # one broken placement must not stop the others: its own run fails again, and is logged
            left.append(placement)
    _store_time([placement for placement, _ in unchanged], now)
    stored = _store_together(hub, written, seen, trigger, now)
    left.extend(run.placement for run, _, _ in written if run not in stored)
    for placement, outcome in [*unchanged, *((run.placement, outcome) for run, outcome in stored.items())]:
        tasks.follow_up(placement, outcome, now)
    order = {placement.pk: index for index, placement in enumerate(placements)}
    return sorted(left, key=lambda placement: order[placement.pk])


def _store_together(
    hub: Hub,
    written: Sequence[tuple[RunWrites, Planned, Outcome]],
    seen: Mapping[int, _Stored],
    trigger: str,
    now: datetime,
) -> dict[RunWrites, Outcome]:
    """Store the runs whose placements' state is still what they read, in one transaction; answers those
    stored (none if their write failed)."""
    if not written:
        return {}
    stored: dict[RunWrites, Outcome] = {}
    try:
        with transaction.atomic():
            current = _Stored.read([run.placement for run, _, _ in written], lock=True)
            for run, planned, outcome in written:
                state = current.get(run.placement.pk)
                if state is not None and state == seen[run.placement.pk]:
                    _finish(run, planned, outcome, state, trigger, now, None, None)
                    stored[run] = outcome
            runwrites.store(list(stored))
    except Exception:
        logger.exception("hub %s: the chunk's runs could not be stored together", hub.name)
        return {}
    return stored


def _finish(
    run: RunWrites,
    planned: Planned,
    outcome: Outcome,
    current: _Stored,
    trigger: str,
    now: datetime,
    actor: Actor,
    edit: DecisionChange | None,
) -> DecisionChange | None:
    """Under the row lock: the run's status on top of the one read under it (rollout rounds and run
    steps write other status keys of the same row, none of which may be lost), and its history entry
    when the selected set changed (keyed by the newest entry, read with the lock)."""
    placement = run.placement
    placement.status = planned.status(current.status)
    if set(outcome.before) == set(outcome.after):
        return None
    run.change = history.record_change(
        placement, trigger, outcome.before, outcome.after, now, actor, follows=current.follows, into=edit
    )
    return run.change


def _store_time(placements: Sequence[Placement], now: datetime) -> None:
    """Runs that would store what is stored: only their time, in one UPDATE."""
    for placement in placements:
        placement.last_scheduled_at = now
    if placements:
        Placement.objects.filter(pk__in=[p.pk for p in placements]).update(last_scheduled_at=now)


# Schedulings on a state that changed before they could be stored, before one runs under the lock.
_OPTIMISTIC_ATTEMPTS = 2
# The status keys a scheduler run reads: the conditions it carries forward and Fleet's policy snapshot.
_SCHEDULING_STATUS_KEYS = ("conditions", "policySnapshot")


@dataclass
class _Stored:
    """What a scheduler run of one placement reads from its row and its dashboard-owned decision rows;
    two reads compare equal when a run on the first would decide as one on the second."""

    spec: dict[str, Any]
    scheduling_status: tuple[Any, ...]
    fingerprint: tuple[Any, ...]
    status: dict[str, Any] = field(compare=False)
    rows: list[Any] = field(compare=False)
    # the stored run's digest (Placement.run_digest)
    digest: str = field(compare=False)
    # the pk of the newest history entry (None: none, or not read), which a new entry's key names
    follows: int | None = field(compare=False, default=None)

    @classmethod
    def read(cls, placements: Sequence[Placement], *, lock: bool) -> dict[int, _Stored]:
        """The stored state of these placements (those that still exist) by id, their rows read in one
        query (locked, in id order, with `lock`) and their decision rows in one per family."""
        query = Placement.objects.select_for_update() if lock else Placement.objects
        newest = DecisionChange.objects.filter(placement=OuterRef("pk")).order_by("-at", "-pk").values("pk")
        rows = (
            query.filter(pk__in=[placement.pk for placement in placements])
            .order_by("pk")
            .annotate(follows=Subquery(newest[:1]))
            .values_list("pk", "spec", "status", "run_digest", "follows")
        )
        fields = {pk: rest for pk, *rest in rows}
        return _states([placement for placement in placements if placement.pk in fields], fields)

    @classmethod
    def read_one(cls, placement: Placement, *, lock: bool) -> _Stored:
        found = cls.read([placement], lock=lock)
        if placement.pk not in found:
            raise Placement.DoesNotExist(f"placement {placement.pk} was deleted")
        return found[placement.pk]

    @classmethod
    def of(cls, spec: Any, status: Any, digest: str, stored_rows: StoredRows, follows: int | None) -> _Stored:
        status = status or {}
        rows, fingerprint = stored_rows
        return cls(
            spec or {},
            tuple(status.get(key) for key in _SCHEDULING_STATUS_KEYS),
            fingerprint,
            status,
            rows,
            digest,
            follows,
        )


def owned_rows(model: type[M], placements: Sequence[Placement]) -> dict[int, list[M]]:
    """Each placement's dashboard-owned rows of `model` (its PlacementDecisions or ClusterResourceBindings)
    by placement id, in one query, in the order they were created."""
    found: dict[int, list[M]] = {placement.pk: [] for placement in placements}
    rows = model._default_manager.filter(placement__in=list(found), owner=Owner.DASHBOARD)
    for row in rows.order_by("pk"):
        found[row.placement_id].append(row)  # type: ignore[attr-defined]
    return found


def read_stored(placements: Sequence[Placement]) -> dict[int, _Stored]:
    """What `reschedule` reads of these placements (their fields as read from their rows, their rows in
    one query per family), by id: the first attempt's read of a full reschedule's chunk."""
    return _states(placements, {p.pk: (p.spec, p.status, p.run_digest, None) for p in placements})


def _states(placements: Sequence[Placement], fields: Mapping[int, Sequence[Any]]) -> dict[int, _Stored]:
    """The stored states of these placements from their fields (spec, status, digest, newest history
    entry) by id, with their decision rows read in one query per family."""
    states = {}
    for family in {placement.family for placement in placements}:
        own = [placement for placement in placements if placement.family is family]
        rows = family.stored_rows(own)
        for placement in own:
            spec, status, digest, follows = fields[placement.pk]
            states[placement.pk] = _Stored.of(spec, status, digest, rows[placement.pk], follows)
    return states


# The writes that store one scheduler run's result: they add its rows to the run's RunWrites, and
# answer what it changed.
Writer = Callable[[RunWrites], Outcome]


def _same_status(status: dict[str, Any]) -> dict[str, Any]:
    return status


@dataclass
class Planned:
    """One scheduler run's result: the writes that store it, the status it stores (from the one read
    under the row lock), and, when storing it would change nothing stored (`unchanged_run`), the outcome
    without them."""

    write: Writer
    unchanged: Outcome | None = None
    status: Callable[[dict[str, Any]], dict[str, Any]] = _same_status


def unchanged_run(stored: _Stored, status: Mapping[str, Any], explained: Explained) -> bool:
    """Whether a run that writes no decision rows and records no events, and stores `status` and
    `explained`, would store what `stored` holds (its digest, not the blobs, compared)."""
    return dict(status) == stored.status and explained.digest == stored.digest


def _plan(placement: Placement, stored: _Stored, snapshot: HubSnapshot, now: datetime) -> Planned:
    """Run the scheduler on `stored`; answers the writes that store its result."""
    placement.spec, placement.status = stored.spec, stored.status
    try:
        parsed = parse(placement)
    except ManifestError as exc:
        # a stored spec the scheduler cannot read (e.g. mirrored from a hub with a newer CRD)
        return _error_writer(placement, f"{exc.field}: {exc.message}", now, stored)
    if placement.read_only:
        return _plan_observed(placement, parsed, snapshot, now)
    return placement.family.plan(placement, parsed, stored, snapshot, now)


def _error_writer(placement: Placement, error: str, now: datetime, stored: _Stored) -> Planned:
    selected = placement.family.selected(stored.rows)
    explained = Explained({"error": error})
    outcome = Outcome(selected, selected, changed_decisions=False)

    def write(run: RunWrites) -> Outcome:
        _save_run(run, explained, now)
        return outcome

    return Planned(write, outcome if unchanged_run(stored, stored.status, explained) else None)


def _save_run(run: RunWrites, explained: Explained, now: datetime) -> None:
    placement = run.placement
    placement.explanation, placement.cluster_record = explained.report, explained.packed
    placement.run_digest = explained.digest
    placement.last_scheduled_at = now
    run.save_run(explained.name_table)


def _plan_observed(placement: Placement, parsed: Parsed, snapshot: HubSnapshot, now: datetime) -> Planned:
    """Hub-owned: explain, never decide. The selection is what the hub's own objects say."""
    result, error = _schedule_or_error(placement, parsed, snapshot, now)
    explained = explanations.stored(result) if result is not None else Explained({"error": error})
    selected = placement.family.observed_selection(placement, snapshot)

    def write(run: RunWrites) -> Outcome:
        _save_run(run, explained, now)
        last = placement.history.order_by("-at", "-pk").values_list("selected", flat=True).first()
        return Outcome(list(last or []), selected, changed_decisions=False)

    return Planned(write)


def _schedule_or_error(
    placement: Placement, parsed: Parsed, snapshot: HubSnapshot, now: datetime
) -> tuple[ScheduleResult | None, str]:
    try:
        return placement.family.schedule(placement, parsed, snapshot, now), ""
    except ManifestError as exc:
        return None, exc.message


# --- spec changes ----------------------------------------------------------------------------------


def _audit(actor: Actor, action: str, placement: Placement, request: HttpRequest | None, **diff: Any) -> None:
    who = actor or history.actor_label(actor)
    audit.record(who, action, placement, hub=placement.hub, request=request, **diff)


def validate_spec(placement: Placement, spec: Mapping[str, Any]) -> None:
    """ManifestError from the scheduler's parser as a Django ValidationError {field: message}."""
    if not isinstance(spec, Mapping):
        raise ValidationError({"spec": "expected a mapping"})
    try:
        admit(placement, spec)
    except ManifestError as exc:
        raise ValidationError({exc.field: exc.message}) from None


def apply_spec(
    placement: Placement,
    spec: Mapping[str, Any],
    *,
    actor: Actor,
    trigger: str = "spec edited",
    request: HttpRequest | None = None,
    audit_as: str | None = SPEC_ACTION,
) -> Placement:
    """Validate, save and reschedule a dashboard-owned placement's new spec; recorded in its history and,
    as `audit_as` (None: the caller audits its own narrower change), in the audit log."""
    access.authorise_change(actor, placement, audit_as or SPEC_ACTION, request=request)
    validate_spec(placement, spec)
    before, version = copy.deepcopy(placement.spec), placement.updated
    placement.spec = dict(spec)
    placement.save(update_fields=["spec", "updated"])
    edit = None
    if before != placement.spec:
        edit, new = history.record_spec_change(placement, trigger, before, actor, follows=version)
        if new and audit_as:
            _audit(actor, audit_as, placement, request, before=before, after=placement.spec)
    reschedule(placement, trigger=trigger, actor=actor, edit=edit)
    return placement


def create_placement(
    *,
    kind: str,
    hub: Hub,
    namespace: str,
    name: str,
    spec: Mapping[str, Any],
    actor: Actor,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    request: HttpRequest | None = None,
) -> Placement:
    """A dashboard-owned Placement / ClusterResourcePlacement of `hub`, validated, scheduled and audited."""
    if kind not in Placement.Kind.values:
        raise ValidationError({"kind": f"must be one of {', '.join(Placement.Kind.values)}"})
    placement = Placement(
        hub=hub,
        owner=Owner.DASHBOARD,
        kind=kind,
        namespace=namespace,
        name=name,
        spec=dict(spec) if isinstance(spec, Mapping) else spec,
        labels=dict(labels or {}),
        annotations=dict(annotations or {}),
    )
    if not placement.family.namespaced:
        # a cluster-scoped placement ignores the namespace it was given
        placement.namespace = ""
    elif not namespace:
        raise ValidationError({"metadata.namespace": "Required value"})
    access.authorise(
        actor,
        lambda user: access.can_add(user, hub, kind, placement.namespace),
        access.ADD_DENIED,
        action=CREATE_ACTION,
        target=placement,
        request=request,
    )
    try:
        admit(placement)
    except ManifestError as exc:
        raise ValidationError({exc.field: exc.message}) from None
    if Placement.objects.filter(hub=hub, kind=kind, namespace=placement.namespace, name=name).exists():
        raise ValidationError({"metadata.name": f"{kind} {placement} already exists on hub {hub}"})
    placement.save()
    created, _ = history.record_spec_change(placement, "created", None, actor)
    _audit(actor, CREATE_ACTION, placement, request, after=placement.spec)
    logger.info("%s %s created on hub %s by %s", kind, placement, hub, history.actor_label(actor))
    reschedule(placement, trigger="created", actor=actor, edit=created)
    return placement


def delete_placement(placement: Placement, *, actor: Actor, request: HttpRequest | None = None) -> None:
    """Delete a dashboard-owned placement with its own decisions and bindings (audited)."""
    access.authorise_change(actor, placement, DELETE_ACTION, request=request)
    before = {key: getattr(placement, key) for key in ("kind", "namespace", "name", "spec")}
    with transaction.atomic():
        _audit(actor, DELETE_ACTION, placement, request, before=before)
        # a dashboard placement's own decisions and bindings go with it; hub mirrors are not ours
        PlacementDecision.objects.filter(placement=placement, owner=Owner.DASHBOARD).delete()
        ClusterResourceBinding.objects.filter(placement=placement, owner=Owner.DASHBOARD).delete()
        placement.delete()
    logger.info("%s %s deleted by %s", placement.kind, placement, history.actor_label(actor))


def due_delay(due: datetime, now: datetime) -> float:
    """Seconds until `due` (0 when past)."""
    return max((due - now) / timedelta(seconds=1), 0.0)
