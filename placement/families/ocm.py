"""The OCM family: `Placement` (cluster.open-cluster-management.io), scheduled on the hub's
ManagedClusters and stored as PlacementDecisions (published to the hub); its prioritizer weights, its
what-if controls and tolerations, its access rule (roles in its namespace), the upstream trigger chain of
the changes that re-queue it, and the taint filter that settles a taint edit's preview."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from django.db import NotSupportedError, connection, models
from django.db.models import OuterRef, Q, QuerySet, Subquery, Sum

from inventory import roles, scheduler_inputs
from inventory.changes import HubChanges, scheduler_view
from inventory.editing import invalid_value
from inventory.models import Hub, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding
from placement import explanations, hubdecisions, parsed_placements, queries, service, tables
from placement.models import PLACEMENT_LABEL, Owner, Placement, PlacementDecision
from placement.runwrites import RunWrites
from placement.scheduler.labels import qualified_name_error
from placement.scheduler.ocm import triggers
from placement.scheduler.ocm import types as ocm
from placement.scheduler.ocm.decisions import CREATE, DELETE, PATCH_LABELS, PATCH_STATUS, BindPlan
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.manifests import parse_ocm_object, parse_placement
from placement.scheduler.ocm.report import OcmScheduleResult
from placement.scheduler.ocm.schedule import schedule_placement
from placement.scheduler.ocm.taints import cluster_tolerated, toleration_error, untolerated_reason
from placement.scheduler.ocm.types import ADDITIVE, BUILT_IN_PRIORITIZERS, EXACT
from placement.scheduler.record import ClusterRecord, Ints
from placement.scheduler.render import decision_groups_table, placement_decisions_table, section

API_VERSION = "cluster.open-cluster-management.io/v1beta1"


class OcmFamily:
    kind = Placement.Kind.PLACEMENT.value
    label = "OCM"
    api_version = API_VERSION
    namespaced = True
    tolerations_path = "spec.tolerations"
    chart_title = "Weighted score contributions"
    chart_axis = "score × weight"
    whatif_fields: Sequence[str] = ("numberOfClusters", "prioritizerPolicy", "tolerations")
    whatif_template = "placement/ocm/_whatif_controls.html"
    results_template = "placement/ocm/_results.html"
    reads_heartbeats = False
    has_update_runs = False
    has_toleration_seconds = True
    toleration_rules = (
        "An empty key needs Exists; Exists needs an empty value. tolerationSeconds counts from the taint's "
        "timeAdded. Tolerations are tried in order."
    )
    cluster_kind = ManagedCluster.Kind.MANAGED_CLUSTER.value
    # its PlacementDecisions are copied to the hub's publish namespace (placement.publishing)
    publishes_decisions = True
    # its decisions are read by the hub's own rollout of workloads, not rolled out by the dashboard
    rolls_out_bindings = False
    previews_rollout = True
    # the component upstream records its events as
    event_source = "placementController"

    def policy_summary(self, spec: Mapping[str, Any]) -> str:
        """numberOfClusters or "all"."""
        number = spec.get("numberOfClusters")
        return "all clusters" if number is None else f"numberOfClusters: {number}"

    def requested(self, placement: Placement) -> str:
        spec = placement.spec or {}
        number = spec.get("numberOfClusters")
        return "all" if number is None else str(number)

    # --- who may see and change it (placement.access)

    def access_rule(self, held: roles.Held) -> Q:
        """A role in its namespace, or a viewed cluster set bound to it."""
        return roles.namespaced_access(held, OuterRef("hub_id"), OuterRef("namespace"))

    def may_place(self, held: roles.Held, hub: Hub, namespace: str) -> bool:
        return Hub.objects.filter(roles.namespaced_access(held, hub.pk, namespace), pk=hub.pk).exists()

    # --- tolerations (placement.tolerations)

    def tolerations_holder(self, spec: Mapping[str, Any]) -> Any:
        """The mapping of `spec` that holds `tolerations`."""
        return spec

    def editable_tolerations_holder(self, spec: dict[str, Any]) -> dict[str, Any]:
        return spec

    def tolerations_override(
        self, spec: Mapping[str, Any], tolerations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The what-if override that sets these tolerations."""
        return {"tolerations": tolerations}

    def toleration_errors(self, parsed: ocm.Placement) -> dict[str, str]:
        """The key pattern of the CRD, then the scheduler's toleration rules (and its messages): a toleration
        that breaks them turns the placement Misconfigured, so it is refused before saving."""
        errors: dict[str, str] = {}
        for index, toleration in enumerate(parsed.tolerations):
            where = f"{self.tolerations_path}[{index}]"
            if toleration.key and (why := qualified_name_error(toleration.key)) is not None:
                errors[f"{where}.key"] = invalid_value(toleration.key, why)
            if (message := toleration_error([toleration])) is not None:
                errors[where] = message
        return errors

    # --- describe (the `describe` command)

    def describe_status(self, placement: Placement, report: Mapping[str, Any]) -> list[str]:
        """What `oc describe placement` prints after the conditions."""
        selected = (placement.status or {}).get("numberOfSelectedClusters", 0)
        return [
            f"Number Of Selected Clusters:  {selected}",
            *section("Decision Groups", decision_groups_table(report)),
            *section("Decisions", placement_decisions_table(report)),
        ]

    # --- a taint edit's preview (placement.taint_impact)

    def edited_snapshot(self, snapshot: service.HubSnapshot, edited: ManagedCluster) -> service.HubSnapshot:
        """`snapshot` (left untouched) with `edited` in place of the stored cluster of that name."""
        inventory = snapshot.ocm
        clusters = {c.name: c for c in inventory.clusters}
        clusters[edited.name] = scheduler_inputs.managed_cluster(edited)
        live = OcmInventory(
            clusters.values(),
            inventory.cluster_sets.values(),
            inventory.bindings,
            inventory.add_on_scores.values(),
            inventory.decisions,
        )
        return dataclasses.replace(snapshot, ocm=live)

    def taint_candidates(self, cluster: ManagedCluster) -> set[int]:
        """Placements that count the cluster as a candidate: a set holding it is bound to their namespace
        and they list that set or none (the scheduler's own trigger rule)."""
        set_names = cluster.memberships.values_list("cluster_set__name", flat=True)
        bindings = [
            scheduler_inputs.cluster_set_binding(row)
            for row in ManagedClusterSetBinding.objects.filter(
                hub_id=cluster.hub_id, cluster_set__in=set_names
            )
        ]
        namespaces = {b.namespace for b in bindings}
        # a spec the scheduler cannot read decides nothing
        parsed = {
            pk: placement
            for pk, placement in parsed_placements.of_hub(cluster.hub_id).items()
            if placement.namespace in namespaces
        }
        keys = {key for b in bindings for key in triggers.placements_affected_by_binding(b, parsed.values())}
        return {pk for pk, placement in parsed.items() if placement.key in keys}

    def taint_verdict(
        self,
        placement: Placement,
        holds: bool,
        name: str,
        snapshots: tuple[service.HubSnapshot, service.HubSnapshot],
        now: datetime,
    ) -> tuple[bool, str] | None:
        """(would hold, why not) when only the TaintToleration filter reads the placement's choice of the
        cluster (no CEL predicate, which may read spec.taints; tolerations the scheduler accepts): the
        filter's verdict on the stored and the edited cluster settles the preview without scheduling,
        unless the edit lets the cluster through (None: the scheduler must rank it). OCM drops
        untolerated clusters at once."""
        before, after = (snapshot.ocm for snapshot in snapshots)
        parsed = self.parse(service.manifest(placement))
        if parsed.scheduling_disabled or toleration_error(parsed.tolerations) is not None:
            return None
        if any(predicate.cel_expressions for predicate in parsed.predicates):
            return None
        decided = name in before.decided_cluster_names(*parsed.key)
        stored, edited = before.cluster(name), after.cluster(name)
        if edited is None:
            return None
        if (why := untolerated_reason(edited, parsed.tolerations, decided, now)) is not None:
            return False, why
        if stored is not None and cluster_tolerated(stored, parsed.tolerations, decided, now)[0]:
            return holds, ""  # the edit changes nothing the scheduler reads
        return None

    def filtered_by(self, result: OcmScheduleResult, name: str) -> str | None:
        """Why the run filtered the cluster out (None: it did not, or the cluster is not in the inventory)."""
        reason: str | None = result.explain(name)["filteredBy"] if name in result.inventory.position else None
        return reason

    # --- which hub changes re-queue it (placement.requeue)

    def result_owner(self, row: models.Model) -> tuple[str, str] | None:
        """(namespace, name) of the placement a PlacementDecision is labelled with."""
        if isinstance(row, PlacementDecision) and (name := row.labels.get(PLACEMENT_LABEL)):
            return row.namespace, name
        return None

    def requeued_by(self, changes: HubChanges) -> set[tuple[str, str]]:
        """(namespace, name) of the Placements a cluster, set, binding or add-on score change affects, from
        the upstream trigger chain in `placement.scheduler.ocm.triggers`."""
        if changes.clusters or changes.cluster_sets or changes.bindings or changes.add_on_scores:
            return _affected_placements(changes)
        return set()

    # --- the placements that select clusters (placement.queries, for the inventory's pages)

    def selection_counts(self, hub_ids: Sequence[int], names: Sequence[str]) -> dict[tuple[int, str], int]:
        """(hub id, cluster name) -> how many placements' PlacementDecisions hold the cluster."""
        # A cluster appears at most once per placement across its PlacementDecision pages.
        sql, params = _decision_sql("d.hub_id, {cluster_name}, COUNT(*)", hub_ids, names, "GROUP BY 1, 2")
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return {(hub_id, name): count for hub_id, name, count in cursor.fetchall()}

    def selection_size(self) -> Subquery:
        """How many entries the placement of the outer row's own PlacementDecisions hold, as SQL."""
        own = PlacementDecision.objects.filter(placement=OuterRef("pk"), owner=OuterRef("owner"))
        entries = own.order_by().values("placement").annotate(n=Sum(_EntryCount("decisions")))
        return Subquery(entries.values("n")[:1])

    def placements_selecting(self, cluster: ManagedCluster) -> list[int]:
        """Ids of the placements whose PlacementDecisions hold the cluster."""
        sql, params = _decision_sql("DISTINCT d.placement_id", [cluster.hub_id], [cluster.name])
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [row[0] for row in cursor.fetchall()]

    # --- scheduling

    def parse(self, doc: dict[str, Any]) -> ocm.Placement:
        parsed = parse_ocm_object(doc, service.ignore_notes)
        # the manifest names the Placement kind, which is what the parser answers
        assert isinstance(parsed, ocm.Placement)
        return parsed

    def schedule(
        self,
        placement: Placement,
        parsed: ocm.Placement,
        snapshot: service.HubSnapshot,
        now: datetime,
        *,
        spec: Mapping[str, Any] | None = None,
    ) -> OcmScheduleResult:
        return schedule_placement(
            parsed, snapshot.ocm, now, existing_conditions=service._conditions(placement)
        )

    def stored_rows(self, placements: Sequence[Placement]) -> dict[int, service.StoredRows]:
        """Each placement's dashboard-owned PlacementDecisions and what a scheduler run reads of them."""
        return {
            pk: (decisions, tuple((r.pk, r.name, r.labels, r.decisions) for r in decisions))
            for pk, decisions in service.owned_rows(PlacementDecision, placements).items()
        }

    def selected(self, rows: Iterable[PlacementDecision]) -> list[str]:
        return sorted({name for row in rows for name in _cluster_names(row.decisions)})

    def observed_selection(self, placement: Placement, snapshot: service.HubSnapshot) -> list[str]:
        return sorted(snapshot.ocm.decided_cluster_names(placement.namespace, placement.name))

    def plan(
        self,
        placement: Placement,
        parsed: ocm.Placement,
        stored: service._Stored,
        snapshot: service.HubSnapshot,
        now: datetime,
    ) -> service.Planned:
        rows = {row.name: row for row in stored.rows}
        # another worker may have rescheduled it since this process built its snapshot
        snapshot.ocm.replace_decisions(placement.namespace, placement.name, _own(rows.values()))
        before = self.selected(stored.rows)
        result = self.schedule(placement, parsed, snapshot, now)
        explained = explanations.stored(result)
        expiry = snapshot.next_score_expiry(_add_on_resources(parsed), now)
        # a skipped or failed run plans no binds
        binds = not (result.skipped or result.error is not None or result.plan is None)

        def due(outcome: service.Outcome) -> service.Outcome:
            if result.requeue_after is not None:
                outcome.due, outcome.due_trigger = now + result.requeue_after, "taint toleration expired"
            if expiry is not None and (outcome.due is None or expiry < outcome.due):
                outcome.due, outcome.due_trigger = expiry, "add-on score expired"
            return outcome

        def scheduled(status: dict[str, Any]) -> dict[str, Any]:
            return {
                **status,
                "numberOfSelectedClusters": result.number_of_selected_clusters,
                "decisionGroups": result.decision_groups,
                "conditions": result.conditions,
            }

        def write(run: RunWrites) -> service.Outcome:
            if not binds:
                service._save_run(run, explained, now)
                return service.Outcome(before, before, changed_decisions=False)
            assert result.plan is not None
            changed = _apply_bind_plan(run, rows, result.plan)
            snapshot.ocm.replace_decisions(placement.namespace, placement.name, _own(rows.values()))
            service._save_run(run, explained, now)
            run.record_events(result.events, now)
            return due(service.Outcome(before, self.selected(rows.values()), changed))

        stores = scheduled if binds else service._same_status
        writes_rows = binds and result.plan is not None and bool(result.plan.actions or result.events)
        if not writes_rows and service.unchanged_run(stored, stores(stored.status), explained):
            kept = service.Outcome(before, before, changed_decisions=False)
            return service.Planned(write, due(kept) if binds else kept, stores)
        return service.Planned(write, status=stores)

    # --- what is stored

    def current_selection(self, placement: Placement) -> list[str]:
        """Its PlacementDecisions' clusters."""
        # a dashboard placement's published copies mirrored back from the hub are not its decisions
        pages = placement.decisions.filter(owner=placement.owner).values_list("decisions", flat=True)
        return sorted(item["clusterName"] for page in pages for item in page or [])

    def stored_objects(self, placement: Placement) -> QuerySet[PlacementDecision]:
        """The PlacementDecision pages."""
        return queries.decision_pages(placement)

    # --- the score table

    def prioritizer_columns(self, explanation: Mapping[str, Any]) -> list[tuple[str, int | None]]:
        """(prioritizer, weight) in name order."""
        return sorted((explanation.get("weights") or {}).items())

    def score_table(self, explanation: Mapping[str, Any], record: ClusterRecord) -> tables.ScoreTable:
        """The scheduler's own ranks and totals, as stored."""
        rank = record.ints("rank") or Ints.of([None] * len(record))
        ranks = np.where(rank.present, rank.values, 0)
        weights = explanation.get("weights") or {}
        return tables.ScoreTable(
            record, ranks, record.ints("total") or rank, lambda cluster, _rank: score_row(cluster, weights)
        )

    def fixed_clusters(
        self, explanation: Mapping[str, Any], record: ClusterRecord
    ) -> list[tables.FixedCluster] | None:
        """OCM has no fixed list of clusters."""
        return None

    # --- what-if

    def whatif_spec(self, spec: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
        for name, value in override.items():
            # null clears a field: `"numberOfClusters": null` selects every feasible cluster
            if value is None:
                spec.pop(name, None)
            else:
                spec[name] = copy.deepcopy(value)
        return spec

    def whatif_rows(
        self, result: OcmScheduleResult, names: Sequence[str], limit: int
    ) -> tuple[list[tables.ScoreRow], int]:
        """ScoreRows for the top `limit` ranked clusters plus `names`, and the number of scored clusters."""
        ranked, scored = _ranked(result, limit)
        shown = set(ranked)
        wanted = ranked + [n for n in names if n not in shown and n in result.inventory.position]
        return [score_row(result.explain(name), result.weights) for name in wanted], scored

    def whatif_weights(self, result: OcmScheduleResult) -> dict[str, int]:
        return result.weights

    def whatif_conditions(self, result: OcmScheduleResult) -> list[dict[str, Any]]:
        return list(result.conditions)

    def whatif_controls(self, placement: Placement) -> dict[str, Any]:
        """Weights, mode, count and tolerations."""
        spec = placement.spec or {}
        policy = spec.get("prioritizerPolicy") or {}
        configurations = [c for c in policy.get("configurations") or [] if isinstance(c, Mapping)]
        tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
        return {
            "kind": self.kind,
            "mode": policy.get("mode") or ADDITIVE,
            "modes": [ADDITIVE, EXACT],
            "numberOfClusters": spec.get("numberOfClusters"),
            "configurations": [
                {"index": i, "label": _coordinate_label(c), "weight": c.get("weight", 1), "config": c}
                for i, c in enumerate(configurations)
            ],
            "tolerations": [
                {"index": i, "label": _toleration_label(t), "toleration": t}
                for i, t in enumerate(tolerations)
            ],
            "builtIns": list(BUILT_IN_PRIORITIZERS),
        }


OCM = OcmFamily()


def parse_stored(placement: Placement) -> ocm.Placement:
    """The scheduler's view of an OCM Placement as stored, for the trigger chain's rules; raises what the
    Placement parser raises."""
    return parse_placement(service.manifest(placement), service.ignore_notes)


def score_row(cluster: Mapping[str, Any], weights: Mapping[str, int]) -> tables.ScoreRow:
    """A row from one OCM `explain()` / report cluster entry."""
    scores = cluster.get("scores") or {}
    return tables.ScoreRow(
        name=cluster["name"],
        selected=bool(cluster.get("selected")),
        filtered_by=cluster.get("filteredBy"),
        scores=dict(scores),
        # upstream adds raw × weight per prioritizer; duplicate AddOn configs share one summed weight
        contributions={name: raw * weights.get(name, 0) for name, raw in scores.items()},
        total=cluster.get("total"),
        rank=cluster.get("rank"),
    )


def _affected_placements(changes: HubChanges) -> set[tuple[str, str]]:
    placements = list(parsed_placements.of_change(changes).values())
    every = {p.key for p in placements}
    affected: set[tuple[str, str]] = set()
    sets, bindings = _sets_and_bindings(changes.hub_id)
    # scores need their clusters in the inventory: loaded only if clusters, sets and bindings left any out
    for steps in (_set_chain, _score_chain):
        clusters = _score_clusters(changes) if steps is _score_chain else []
        for found in steps(changes, OcmInventory(clusters, sets, bindings), placements):
            affected |= found
            # a full sync changes thousands of objects; once every placement is in, the rest adds nothing
            if affected >= every:
                return affected
    return affected


def _set_chain(
    changes: HubChanges, inventory: OcmInventory, placements: list[ocm.Placement]
) -> Iterator[set[tuple[str, str]]]:
    for change in changes.clusters:
        if change.old or change.new:
            yield triggers.placements_affected_by_cluster_change(
                change.old, change.new, inventory, placements
            )
    for set_change in changes.cluster_sets:
        for cluster_set in filter(None, (set_change.old, set_change.new)):
            yield triggers.placements_affected_by_cluster_set(cluster_set.name, inventory, placements)
    for binding_change in changes.bindings:
        for binding in filter(None, (binding_change.old, binding_change.new)):
            yield triggers.placements_affected_by_binding(binding, placements)


def _score_chain(
    changes: HubChanges, inventory: OcmInventory, placements: list[ocm.Placement]
) -> Iterator[set[tuple[str, str]]]:
    for score_change in changes.add_on_scores:
        if score := score_change.new or score_change.old:
            yield triggers.placements_affected_by_add_on_score(score, inventory, placements)


def _sets_and_bindings(hub_id: int) -> tuple[list[ocm.ManagedClusterSet], list[ocm.ManagedClusterSetBinding]]:
    """The hub's cluster sets and bindings as stored now, as the scheduler reads them."""
    sets = ManagedClusterSet.objects.filter(hub_id=hub_id)
    bindings = ManagedClusterSetBinding.objects.filter(hub_id=hub_id)
    return (
        [s for s in (scheduler_view(row, scheduler_inputs.cluster_set) for row in sets) if s],
        [scheduler_inputs.cluster_set_binding(row) for row in bindings],
    )


def _score_clusters(changes: HubChanges) -> list[ocm.ManagedCluster]:
    """The clusters named by changed add-on scores, as stored now."""
    # a score lives in its cluster's namespace; the identity names it without reading an added row back
    names = {found[1] for change in changes.add_on_scores if (found := change.identity)}
    rows = ManagedCluster.objects.filter(hub_id=changes.hub_id, kind=OcmFamily.cluster_kind, name__in=names)
    return [c for c in (scheduler_view(row, scheduler_inputs.managed_cluster) for row in rows) if c]


# Each element of PlacementDecision.status.decisions, with its clusterName, per database.
_DECISION_ELEMENTS = {
    "postgresql": ("jsonb_array_elements(d.decisions) AS e(value)", "e.value ->> 'clusterName'"),
    "sqlite": ("json_each(d.decisions) AS e", "json_extract(e.value, '$.clusterName')"),
}


class _EntryCount(models.Func):
    """The number of entries of a JSON array column."""

    function = "json_array_length"
    output_field = models.IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


def _decision_sql(
    select: str, hub_ids: Sequence[int], names: Sequence[str], tail: str = ""
) -> tuple[str, list[int | str]]:
    """SQL over every (decision row, clusterName) of `hub_ids` naming one of `names`."""
    if connection.vendor not in _DECISION_ELEMENTS:
        raise NotSupportedError(f"placement counts need PostgreSQL or SQLite, not {connection.vendor}")
    elements, cluster_name = _DECISION_ELEMENTS[connection.vendor]
    table = connection.ops.quote_name(PlacementDecision._meta.db_table)
    placements = connection.ops.quote_name(Placement._meta.db_table)
    # only the rows a placement owns like itself, as `current_selection` and `selection_size` read them
    sql = (
        f"SELECT {select.format(cluster_name=cluster_name)} FROM {table} d "
        f"JOIN {placements} p ON p.id = d.placement_id AND p.owner = d.owner, {elements} "
        f"WHERE d.hub_id IN ({', '.join(['%s'] * len(hub_ids))}) "
        f"AND {cluster_name} IN ({', '.join(['%s'] * len(names))}) {tail}"
    )
    return sql, [*hub_ids, *names]


def _ranked(result: OcmScheduleResult, limit: int) -> tuple[list[str], int]:
    if result.outcome is None:
        return [], 0
    ranked = result.outcome.ranked
    return [result.names[p] for p in ranked[:limit]], len(ranked)


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


def _own(rows: Iterable[PlacementDecision]) -> list[ocm.PlacementDecision]:
    return [hubdecisions.decision(row.namespace, row.name, row.labels, row.decisions) for row in rows]


def _cluster_names(entries: Sequence[Any]) -> list[str]:
    return [str(e.get("clusterName", "")) for e in entries if isinstance(e, Mapping)]


def _add_on_resources(parsed: ocm.Placement) -> set[str]:
    return {
        config.score_coordinate.add_on.resource_name
        for config in parsed.prioritizer_policy.configurations
        if config.score_coordinate is not None and config.score_coordinate.add_on is not None
    }


def _apply_bind_plan(run: RunWrites, rows: dict[str, PlacementDecision], plan: BindPlan) -> bool:
    """The bind step's API calls as writes of the rows, in upstream order; `rows` ends as the stored state."""
    placement = run.placement
    created, updated, deleted = [], {}, []
    for action in plan.actions:
        manifest_ = action.manifest or {}
        if action.verb == CREATE:
            # a real API server drops status on create; the status patch that follows fills it in
            rows[action.name] = PlacementDecision(
                placement=placement,
                hub=placement.hub,
                owner=Owner.DASHBOARD,
                namespace=placement.namespace,
                name=action.name,
                labels=manifest_["metadata"]["labels"],
                decisions=[],
            )
            created.append(rows[action.name])
        elif action.verb == PATCH_STATUS:
            rows[action.name].decisions = manifest_["status"]["decisions"]
            updated[action.name] = rows[action.name]
        elif action.verb == PATCH_LABELS:
            rows[action.name].labels = manifest_["metadata"]["labels"]
            updated[action.name] = rows[action.name]
        elif action.verb == DELETE:
            deleted.append(rows.pop(action.name).pk)
    run.create(created)
    # a page created and patched in one pass was created with its final content
    run.update([r for r in updated.values() if r not in created], ["labels", "decisions"])
    run.delete(PlacementDecision, deleted)
    return bool(plan.actions)
