"""The Fleet family: KubeFleet's `ClusterResourcePlacement`, scheduled on the hub's MemberClusters and
stored as ClusterResourceBindings under a policy snapshot; its affinity and topology spread scores, its
what-if controls and tolerations, its access rule (a populated cluster set of its hub), the changes that
re-queue it, and its candidates for a taint edit's preview."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from django.db import models
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTextTransform

from inventory import roles, scheduler_inputs
from inventory.changes import HubChanges
from inventory.models import Hub, ManagedCluster
from placement import explanations, queries, service, tables
from placement.models import CRP_LABEL, ClusterResourceBinding, Owner, Placement
from placement.runwrites import RunWrites
from placement.scheduler.errors import ManifestError, json_type
from placement.scheduler.fleet import types as fleet
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.manifests import parse_cluster_resource_placement, parse_fleet_object
from placement.scheduler.fleet.report import FleetScheduleResult
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import PICK_ALL, PICK_FIXED, STATE_UNSCHEDULED
from placement.scheduler.ocm.status import set_condition
from placement.scheduler.record import ClusterRecord, Ints
from placement.scheduler.render import bindings_table, section

# The CRP condition the policy snapshot's Scheduled condition becomes (KubeFleet's naming).
CRP_SCHEDULED = "ClusterResourcePlacementScheduled"
# Fleet has no weights: its two score columns are already weighted sums (affinity terms) or spread.
AFFINITY, TOPOLOGY = "Affinity", "TopologySpread"
PREFERRED_PATH = ("affinity", "clusterAffinity", "preferredDuringSchedulingIgnoredDuringExecution")


class FleetFamily:
    kind = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT.value
    label = "Fleet"
    namespaced = False
    tolerations_path = "spec.policy.tolerations"
    chart_title = "Affinity and topology spread scores"
    chart_axis = "score"
    whatif_fields: Sequence[str] = ("numberOfClusters", "preferred", "policy")
    whatif_template = "placement/fleet/_whatif_controls.html"
    results_template = "placement/fleet/_results.html"
    reads_heartbeats = True
    has_update_runs = True
    has_toleration_seconds = False
    toleration_rules = "Equal needs a key; Exists needs an empty value."
    cluster_kind = ManagedCluster.Kind.MEMBER_CLUSTER.value
    publishes_decisions = False
    # its bindings go to the hub, and a RollingUpdate CRP rolls onto them (placement.rolling)
    rolls_out_bindings = True
    previews_rollout = False
    event_source = "scheduler"

    def policy_summary(self, spec: Mapping[str, Any]) -> str:
        """PickAll / PickN (n) / PickFixed (n)."""
        # A missing policy defaults to PickAll upstream.
        policy = spec.get("policy") or {}
        placement_type = policy.get("placementType") or "PickAll"
        if placement_type == "PickN":
            return f"PickN ({policy.get('numberOfClusters', 0)})"
        if placement_type == "PickFixed":
            return f"PickFixed ({len(policy.get('clusterNames') or [])})"
        return placement_type

    def requested(self, placement: Placement) -> str:
        spec = placement.spec or {}
        policy = spec.get("policy") or {}
        if policy.get("placementType") == "PickN":
            return str(policy.get("numberOfClusters", 0))
        if policy.get("placementType") == "PickFixed":
            return str(len(policy.get("clusterNames") or []))
        return "all"

    @property
    def api_version(self) -> str:
        # read when asked: this module may load while the service is still loading
        return service.FLEET_API_VERSION

    # --- who may see and change it (placement.access)

    def access_rule(self, held: roles.Held) -> Q:
        """Cluster-scoped: a populated cluster set of its hub."""
        return Q(Exists(roles.populated_sets_of(held.sets, OuterRef("hub_id"))))

    def may_place(self, held: roles.Held, hub: Hub, namespace: str) -> bool:
        return roles.populated_sets_of(held.sets, hub.pk).exists()

    # --- tolerations (placement.tolerations)

    def tolerations_holder(self, spec: Mapping[str, Any]) -> Any:
        """The mapping of `spec` that holds `tolerations` (None when the spec has no policy)."""
        return spec.get("policy")

    def editable_tolerations_holder(self, spec: dict[str, Any]) -> dict[str, Any]:
        holder: dict[str, Any]
        holder = spec["policy"] = dict(spec["policy"]) if isinstance(spec.get("policy"), Mapping) else {}
        return holder

    def tolerations_override(
        self, spec: Mapping[str, Any], tolerations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The what-if override that sets these tolerations: the whole policy holding them."""
        return {"policy": spec["policy"]}

    def toleration_errors(self, parsed: fleet.ClusterResourcePlacement) -> dict[str, str]:
        """The parser's checks are all there is: a CRP's scheduler applies no further toleration rules."""
        return {}

    # --- describe (the `describe` command)

    def describe_status(self, placement: Placement, report: Mapping[str, Any]) -> list[str]:
        """What `oc describe crp` prints after the conditions."""
        return section("Bindings", bindings_table(report))

    # --- a taint edit's preview (placement.taint_impact)

    def edited_snapshot(self, snapshot: service.HubSnapshot, edited: ManagedCluster) -> service.HubSnapshot:
        """`snapshot` (left untouched) with `edited` in place of the stored member of that name."""
        members = {c.name: c for c in snapshot.fleet.clusters}
        members[edited.name] = scheduler_inputs.member_cluster(edited)
        return dataclasses.replace(snapshot, fleet=FleetInventory(members.values()))

    def taint_candidates(self, cluster: ManagedCluster) -> set[int]:
        """Every CRP of the hub that filters by taints: PickFixed ignores them."""
        rows = Placement.objects.filter(hub_id=cluster.hub_id, kind=self.kind)
        return {pk for pk, spec in rows.values_list("pk", "spec") if _placement_type(spec) != PICK_FIXED}

    def taint_verdict(
        self,
        placement: Placement,
        holds: bool,
        name: str,
        snapshots: tuple[service.HubSnapshot, service.HubSnapshot],
        now: datetime,
    ) -> tuple[bool, str] | None:
        """Never settled without scheduling: Fleet keeps a tainted cluster's existing binding, so only its
        scheduler can tell."""
        return None

    def filtered_by(self, result: FleetScheduleResult, name: str) -> str | None:
        """Why the run filtered the member out (None: it did not, or it is not a member)."""
        explanation = result.explain(name)
        return explanation.filtered_by if explanation is not None else None

    # --- which hub changes re-queue it (placement.requeue)

    def result_owner(self, row: models.Model) -> tuple[str, str] | None:
        """("", name) of the CRP a ClusterResourceBinding is labelled with."""
        if isinstance(row, ClusterResourceBinding) and (name := row.labels.get(CRP_LABEL)):
            return "", name
        return None

    def requeued_by(self, changes: HubChanges) -> set[tuple[str, str]]:
        """A MemberCluster change re-queues every ClusterResourcePlacement of the hub."""
        if not changes.member_clusters:
            return set()
        names = Placement.objects.filter(hub_id=changes.hub_id, kind=self.kind).values_list("name", flat=True)
        return {("", name) for name in names}

    # --- the placements that select clusters (placement.queries, for the inventory's pages)

    def selection_counts(self, hub_ids: Sequence[int], names: Sequence[str]) -> dict[tuple[int, str], int]:
        """(hub id, member name) -> how many CRPs' live bindings target the member."""
        live = _live_bindings(hub_ids, names).annotate(target=KeyTextTransform("targetCluster", "spec"))
        rows = live.values("hub_id", "target").annotate(count=Count("pk"))
        return {(row["hub_id"], row["target"]): row["count"] for row in rows}

    def placements_selecting(self, cluster: ManagedCluster) -> QuerySet[Any]:
        """Ids of the CRPs whose live bindings target the member (a subquery)."""
        return _live_bindings([cluster.hub_id], [cluster.name]).values("placement_id")

    def selection_size(self) -> Subquery:
        """How many live bindings the CRP of the outer row holds, as SQL."""
        own = _live(ClusterResourceBinding.objects.filter(placement=OuterRef("pk"), owner=OuterRef("owner")))
        return Subquery(own.order_by().values("placement").annotate(n=Count("pk")).values("n")[:1])

    # --- scheduling

    def parse(self, doc: dict[str, Any]) -> fleet.ClusterResourcePlacement:
        parsed = parse_fleet_object(doc, service.ignore_notes)
        # the manifest names the ClusterResourcePlacement kind, which is what the parser answers
        assert isinstance(parsed, fleet.ClusterResourcePlacement)
        return parsed

    def schedule(
        self,
        placement: Placement,
        parsed: fleet.ClusterResourcePlacement,
        snapshot: service.HubSnapshot,
        now: datetime,
        *,
        spec: Mapping[str, Any] | None = None,
    ) -> FleetScheduleResult:
        bindings = snapshot.bindings.get(placement.name, ())
        index, _ = policy_snapshot(placement, bindings, spec)
        try:
            return schedule_crp(
                parsed, snapshot.fleet, bindings, now, policy_snapshot_name=f"{placement.name}-{index}"
            )
        except fleet.SchedulingError as exc:
            raise AbortedCycle(exc) from None

    def stored_rows(self, placements: Sequence[Placement]) -> dict[int, service.StoredRows]:
        """Each placement's dashboard-owned ClusterResourceBindings and what a scheduler run reads of them."""
        return {
            pk: (bindings, tuple((r.pk, r.name, r.labels, r.annotations, r.spec, r.status) for r in bindings))
            for pk, bindings in service.owned_rows(ClusterResourceBinding, placements).items()
        }

    def selected(self, rows: Iterable[ClusterResourceBinding]) -> list[str]:
        return bound_clusters(service._converted(rows, service._binding))

    def observed_selection(self, placement: Placement, snapshot: service.HubSnapshot) -> list[str]:
        return bound_clusters(snapshot.bindings.get(placement.name, ()))

    def plan(
        self,
        placement: Placement,
        parsed: fleet.ClusterResourcePlacement,
        stored: service._Stored,
        snapshot: service.HubSnapshot,
        now: datetime,
    ) -> service.Planned:
        rows = {row.name: row for row in stored.rows}
        own = service._converted(rows.values(), service._binding)
        snapshot.bindings[placement.name] = own
        before = bound_clusters(own)
        try:
            fleet_result = self.schedule(placement, parsed, snapshot, now)
        except AbortedCycle as exc:
            return _aborted(placement, exc, rows, snapshot, stored, now)
        explained = explanations.stored(fleet_result)
        index, digest = policy_snapshot(placement, own)
        scheduled = {
            **fleet_result.condition.to_dict(),
            "type": CRP_SCHEDULED,
            "observedGeneration": parsed.generation,
        }

        def status(stored_status: dict[str, Any]) -> dict[str, Any]:
            return {
                **stored_status,
                "conditions": set_condition(service._conditions_of(stored_status), scheduled, now),
                "policySnapshot": {"index": index, "hash": digest},
            }

        def write(run: RunWrites) -> service.Outcome:
            _store_bindings(run, rows, [change.binding for change in fleet_result.binding_changes])
            snapshot.bindings[placement.name] = service._converted(rows.values(), service._binding)
            service._save_run(run, explained, now)
            after = bound_clusters(snapshot.bindings[placement.name])
            return service.Outcome(before, after, bool(fleet_result.binding_changes))

        if fleet_result.binding_changes or not service.unchanged_run(
            stored, status(stored.status), explained
        ):
            return service.Planned(write, status=status)
        return service.Planned(write, service.Outcome(before, before, changed_decisions=False), status)

    # --- what is stored

    def current_selection(self, placement: Placement) -> list[str]:
        """Its live bindings' target clusters."""
        bindings = _live(placement.bindings.filter(owner=placement.owner)).values_list("spec", flat=True)
        return sorted(spec.get("targetCluster", "") for spec in bindings)

    def stored_objects(self, placement: Placement) -> QuerySet[ClusterResourceBinding]:
        """The ClusterResourceBindings with their state."""
        return queries.bindings(placement)

    # --- the score table

    def prioritizer_columns(self, explanation: Mapping[str, Any]) -> list[tuple[str, int | None]]:
        """The affinity and spread scores, which carry no weight."""
        return [(AFFINITY, None), (TOPOLOGY, None)]

    def score_table(self, explanation: Mapping[str, Any], record: ClusterRecord) -> tables.ScoreTable:
        """Ranked as PickN picks: (topology, affinity) descending, ties to the larger name, as KubeFleet."""
        empty = Ints.of([None] * len(record))
        affinity, topology = (
            record.ints("affinityScore") or empty,
            record.ints("topologySpreadScore") or empty,
        )
        positions = np.flatnonzero((record.reasons.codes < 0) & affinity.present)
        keys = (record.name_rank[positions], affinity.values[positions], topology.values[positions])
        order = positions[np.lexsort(keys)[::-1]]
        ranks = np.zeros(len(record), dtype=np.int64)
        ranks[order] = np.arange(1, len(order) + 1)
        totals = Ints(affinity.values + topology.values, ranks > 0)
        return tables.ScoreTable(record, ranks, totals, score_row)

    def fixed_clusters(
        self, explanation: Mapping[str, Any], record: ClusterRecord
    ) -> list[tables.FixedCluster] | None:
        """A PickFixed explanation's listed clusters with their status: its decisions hold every listed name
        (a name the inventory lacks is in no column, an ineligible one has its filter reason)."""
        if explanation.get("placementType") != PICK_FIXED:
            return None
        members = set(record.names)
        fixed = []
        for decision in explanation.get("decisions") or ():
            name = decision["clusterName"]
            if decision.get("selected"):
                status = tables.FIXED_SELECTED
            elif name in members:
                status = tables.FIXED_NOT_ELIGIBLE
            else:
                status = tables.FIXED_NOT_FOUND
            fixed.append(tables.FixedCluster(name, status, decision.get("reason") or ""))
        return fixed

    # --- what-if

    def whatif_spec(self, spec: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
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

    def whatif_rows(
        self, result: FleetScheduleResult, names: Sequence[str], limit: int
    ) -> tuple[list[tables.ScoreRow], int]:
        """ScoreRows for the top `limit` ranked clusters plus `names`, and the number of scored clusters."""
        order = _order(result)
        table = result.cluster_table
        ranks = {table.names[p]: rank for rank, p in enumerate(order, 1)}
        extra = [name for name in names if name not in ranks or ranks[name] > limit]
        wanted = [table.names[p] for p in order[:limit]] + extra
        rows = [
            score_row(explanation.to_dict(), ranks.get(name))
            for name in wanted
            if (explanation := result.explain(name)) is not None
        ]
        return rows, len(order)

    def whatif_weights(self, result: FleetScheduleResult) -> dict[str, int]:
        return {}

    def whatif_conditions(self, result: FleetScheduleResult) -> list[dict[str, Any]]:
        return [result.condition.to_dict()]

    def whatif_controls(self, placement: Placement) -> dict[str, Any]:
        """Placement type, count and the preferred terms' weights."""
        policy = (placement.spec or {}).get("policy")
        if not isinstance(policy, dict):
            policy = {}
        terms = _preferred_terms(policy)
        return {
            "kind": self.kind,
            "placementType": policy.get("placementType") or "PickAll",
            "numberOfClusters": policy.get("numberOfClusters"),
            "preferred": [
                {"index": index, "weight": term.get("weight", 0), "label": _term_label(term)}
                for index, term in enumerate(terms)
                if isinstance(term, Mapping)
            ],
        }


FLEET = FleetFamily()


def parse_stored(placement: Placement) -> fleet.ClusterResourcePlacement:
    """The scheduler's view of a ClusterResourcePlacement as stored; raises ManifestError as admission
    would."""
    return parse_cluster_resource_placement(service.manifest(placement), service.ignore_notes)


class AbortedCycle(ManifestError):
    """A scheduling cycle KubeFleet's scheduler aborts (a plugin error), as a policy error; `written` holds
    the bindings it wrote before the failing step."""

    def __init__(self, error: fleet.SchedulingError) -> None:
        super().__init__("spec.policy", str(error))
        self.written = error.written


def _aborted(
    placement: Placement,
    error: AbortedCycle,
    rows: dict[str, ClusterResourceBinding],
    snapshot: service.HubSnapshot,
    stored: service._Stored,
    now: datetime,
) -> service.Planned:
    """A cycle upstream aborts: the error is the run's explanation and no condition changes, but the
    bindings the cycle wrote before the failing step (dangling ones marked Unscheduled, earlier topology
    cycles' picks) stay written, as KubeFleet's scheduler leaves them."""
    failed = service._error_writer(placement, error.message, now, stored)
    written = [binding for binding in error.written if not _holds(rows.get(binding.name), binding)]
    if not written:
        return failed
    before = bound_clusters(snapshot.bindings.get(placement.name, ()))

    def write(run: RunWrites) -> service.Outcome:
        _store_bindings(run, rows, written)
        snapshot.bindings[placement.name] = service._converted(rows.values(), service._binding)
        failed.write(run)
        return service.Outcome(before, bound_clusters(snapshot.bindings[placement.name]), True)

    return service.Planned(write)


def _holds(row: ClusterResourceBinding | None, binding: fleet.ClusterResourceBinding) -> bool:
    """Whether the stored row already says what `binding` does."""
    return row is not None and _stored_fields(row) == _stored_fields(binding.to_manifest())


def _store_bindings(
    run: RunWrites,
    rows: dict[str, ClusterResourceBinding],
    bindings: Iterable[fleet.ClusterResourceBinding],
) -> None:
    """Create or update the dashboard-owned rows of `bindings` (in `rows`, by name, too)."""
    placement, created, updated = run.placement, [], []
    for binding in bindings:
        body = binding.to_manifest()
        row = rows.get(binding.name)
        if row is None:
            row = ClusterResourceBinding(
                placement=placement, hub=placement.hub, owner=Owner.DASHBOARD, name=binding.name
            )
            created.append(row)
        else:
            updated.append(row)
        row.labels, row.annotations, row.spec = _stored_fields(body)
        rows[row.name] = row
    run.create(created)
    run.update(updated, ["labels", "annotations", "spec"])


def _stored_fields(binding: ClusterResourceBinding | Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """The labels, annotations and spec of a row, or of a binding's manifest."""
    if isinstance(binding, ClusterResourceBinding):
        return binding.labels, binding.annotations, binding.spec
    metadata = binding["metadata"]
    return metadata["labels"], metadata.get("annotations", {}), binding["spec"]


def _live(bindings: QuerySet[ClusterResourceBinding]) -> QuerySet[ClusterResourceBinding]:
    """The bindings that still place their CRP on their cluster: every state but Unscheduled."""
    return bindings.filter(Q(spec__state__isnull=True) | ~Q(spec__state=STATE_UNSCHEDULED))


def _live_bindings(hub_ids: Iterable[int], names: Iterable[str]) -> QuerySet[ClusterResourceBinding]:
    """Live bindings targeting `names` on `hub_ids`, of a CRP that owns them like itself (a hub's
    bindings of a hub-owned CRP, the dashboard's of a dashboard-owned one), as its pages count them."""
    rows = ClusterResourceBinding.objects.filter(hub_id__in=hub_ids, placement__owner=F("owner"))
    return _live(rows.filter(spec__targetCluster__in=list(names)))


def _placement_type(spec: Any) -> str:
    policy = spec.get("policy") if isinstance(spec, Mapping) else None
    return (policy.get("placementType") if isinstance(policy, Mapping) else None) or PICK_ALL


def bound_clusters(bindings: Iterable[fleet.ClusterResourceBinding]) -> list[str]:
    return sorted(
        {b.target_cluster for b in bindings if b.state != fleet.STATE_UNSCHEDULED and not b.deleting}
    )


def policy_snapshot(
    placement: Placement,
    bindings: Iterable[fleet.ClusterResourceBinding],
    spec: Mapping[str, Any] | None = None,
) -> tuple[int, str]:
    """(index, policy hash) of the ClusterSchedulingPolicySnapshot upstream would schedule `spec` under.

    upstream makes a new snapshot (index + 1) whenever the policy changes, except `numberOfClusters`,
    which is an annotation of the same snapshot; bindings of older snapshots are then obsolete. Hub
    mirrors: the newest `<crp>-<index>` their bindings name (the hub's snapshots are not mirrored).
    """
    policy = dict(((placement.spec if spec is None else spec) or {}).get("policy") or {})
    policy.pop("numberOfClusters", None)
    digest = hashlib.sha256(json.dumps(policy, sort_keys=True).encode()).hexdigest()[:16]
    if placement.read_only:
        prefix = f"{placement.name}-"
        indices = [
            int(name[len(prefix) :])
            for name in (b.scheduling_policy_snapshot_name for b in bindings)
            if name.startswith(prefix) and name[len(prefix) :].isdigit()
        ]
        return max(indices, default=0), digest
    stored = (placement.status or {}).get("policySnapshot") or {}
    index = int(stored.get("index", 0))
    return (index + 1 if stored.get("hash") not in (None, digest) else index), digest


def score_row(cluster: Mapping[str, Any], rank: int | None) -> tables.ScoreRow:
    """A row from one Fleet explanation entry; `rank` is None for a cluster that was not scored."""
    scores = {}
    if rank is not None:
        scores = {AFFINITY: cluster["affinityScore"], TOPOLOGY: cluster["topologySpreadScore"]}
    return tables.ScoreRow(
        name=cluster["name"],
        selected=bool(cluster.get("selected")),
        filtered_by=cluster.get("filteredBy"),
        scores=scores,
        contributions=dict(scores),
        total=sum(scores.values()) if scores else None,
        rank=rank,
    )


def _order(result: FleetScheduleResult) -> np.ndarray:
    """Scored, unfiltered member positions by (topology, affinity) descending, ties to the larger name."""
    table = result.cluster_table
    positions = np.flatnonzero(table.scored & (table.filtered_by.codes < 0))
    # positions are name order, so a reversed stable lexsort breaks ties by descending name
    order = np.lexsort((positions, table.affinity[positions], table.topology[positions]))[::-1]
    return positions[order]


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
